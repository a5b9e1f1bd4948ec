-- Exact list totals, continued (see 0012_row_counts.sql for the counters).
--
-- Guests under two or more of the stored filters (status, gender, company_id, workplace) are
-- counted with count(*): one covering index makes each such count an index-only scan, whatever
-- the combination. The leading columns have few values (5 statuses, 2 genders), so a count that
-- does not give them skips over them (B-tree skip scan, PostgreSQL 18); on older servers the
-- combinations that give status still scan only this index, the others fall back to bitmap scans.
-- Not covered: keyword search (GIN and trigram indexes cannot answer index-only), which rechecks
-- the rows it matches.
CREATE INDEX guests_filters_idx ON guests (status, gender, company_id, workplace);

-- Activities (filtered by status or company, moved in sets by the daemon) and the append-only
-- operation logs (one owner per list) keep counters too.
SELECT count_rows_of('activities', 'status', 'company_id');
SELECT count_rows_of('work_wechat_logs', 'work_wechat_id');
SELECT count_rows_of('work_group_logs', 'work_group_id');

INSERT INTO row_counts (tbl, dim, val, n)
SELECT 'activities', v.dim, v.val, count(*) FROM activities a
  CROSS JOIN LATERAL (VALUES ('', ''), ('status', a.status), ('company_id', a.company_id::text)) v(dim, val)
  GROUP BY v.dim, v.val;
INSERT INTO row_counts (tbl, dim, val, n)
SELECT 'work_wechat_logs', v.dim, v.val, count(*) FROM work_wechat_logs l
  CROSS JOIN LATERAL (VALUES ('', ''), ('work_wechat_id', l.work_wechat_id::text)) v(dim, val)
  GROUP BY v.dim, v.val;
INSERT INTO row_counts (tbl, dim, val, n)
SELECT 'work_group_logs', v.dim, v.val, count(*) FROM work_group_logs l
  CROSS JOIN LATERAL (VALUES ('', ''), ('work_group_id', l.work_group_id::text)) v(dim, val)
  GROUP BY v.dim, v.val;

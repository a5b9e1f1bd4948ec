-- Exact list totals without counting every row. Each change of a counted table appends, in the
-- same statement and so in the same transaction, signed deltas per counted value: one row for the
-- whole table (dim '' / val '') and one per filter column (`val` is the value as text, '\N' for
-- NULL). Appending takes no row lock, so concurrent writers never queue on a hot counter row and
-- cannot deadlock on one. A total is the sum of a key's rows, exact in every snapshot. The job
-- daemon folds the rows of each key into one (RowCountCompact), so a sum reads a few rows.
CREATE TABLE row_counts (
  tbl text NOT NULL,
  dim text NOT NULL,
  val text NOT NULL,
  n   bigint NOT NULL
);
CREATE INDEX row_counts_key_idx ON row_counts (tbl, dim, val) INCLUDE (n);

-- The trigger's arguments are the counted columns. One function serves the three statement-level
-- triggers of a table (transition tables allow one event per trigger).
CREATE FUNCTION count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  source text;
  dims text := '('''', '''')';
  col text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    source := 'SELECT 1 AS delta, * FROM counted_new';
  ELSIF TG_OP = 'DELETE' THEN
    source := 'SELECT -1 AS delta, * FROM counted_old';
  ELSE
    source := 'SELECT 1 AS delta, * FROM counted_new UNION ALL SELECT -1 AS delta, * FROM counted_old';
  END IF;
  FOREACH col IN ARRAY TG_ARGV LOOP
    dims := dims || format(', (%L, coalesce(x.%I::text, %L))', col, col, E'\\N');
  END LOOP;
  EXECUTE format(
    'INSERT INTO row_counts (tbl, dim, val, n)
       SELECT %L, v.dim, v.val, sum(x.delta) FROM (%s) x CROSS JOIN LATERAL (VALUES %s) v(dim, val)
       GROUP BY v.dim, v.val HAVING sum(x.delta) <> 0',
    TG_TABLE_NAME, source, dims);
  RETURN NULL;
END
$$;

-- Counts `tbl` by the columns `cols` from here on (the three triggers of count_rows).
CREATE FUNCTION count_rows_of(tbl text, VARIADIC cols text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  args text := (SELECT string_agg(quote_literal(c), ', ') FROM unnest(cols) c);
BEGIN
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS counted_new
    FOR EACH STATEMENT EXECUTE FUNCTION count_rows(%s)', tbl || '_count_ins', tbl, args);
  EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING OLD TABLE AS counted_old NEW TABLE AS counted_new
    FOR EACH STATEMENT EXECUTE FUNCTION count_rows(%s)', tbl || '_count_upd', tbl, args);
  EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS counted_old
    FOR EACH STATEMENT EXECUTE FUNCTION count_rows(%s)', tbl || '_count_del', tbl, args);
END
$$;

SELECT count_rows_of('guests', 'company_id', 'status', 'gender');
SELECT count_rows_of('matches', 'status');
SELECT count_rows_of('memberships', 'status', 'user_id');
SELECT count_rows_of('image_blacklist', 'status', 'source');

-- The counts of the rows already there (the triggers exist from here on).
INSERT INTO row_counts (tbl, dim, val, n)
SELECT 'guests', v.dim, v.val, count(*) FROM guests g
  CROSS JOIN LATERAL (VALUES ('', ''), ('company_id', coalesce(g.company_id::text, E'\\N')),
    ('status', coalesce(g.status::text, E'\\N')), ('gender', coalesce(g.gender::text, E'\\N'))) v(dim, val)
  GROUP BY v.dim, v.val;
INSERT INTO row_counts (tbl, dim, val, n)
SELECT 'matches', v.dim, v.val, count(*) FROM matches m
  CROSS JOIN LATERAL (VALUES ('', ''), ('status', m.status)) v(dim, val)
  GROUP BY v.dim, v.val;
INSERT INTO row_counts (tbl, dim, val, n)
SELECT 'memberships', v.dim, v.val, count(*) FROM memberships m
  CROSS JOIN LATERAL (VALUES ('', ''), ('status', m.status), ('user_id', m.user_id::text)) v(dim, val)
  GROUP BY v.dim, v.val;
INSERT INTO row_counts (tbl, dim, val, n)
SELECT 'image_blacklist', v.dim, v.val, count(*) FROM image_blacklist b
  CROSS JOIN LATERAL (VALUES ('', ''), ('status', b.status), ('source', b.source)) v(dim, val)
  GROUP BY v.dim, v.val;

-- An event's place in the feed (DECISIONS §12), as a function a single statement can call: the
-- transaction's xid raised to the latest tx_id among the same record's events of younger
-- transactions (src/repos/OutboxRepo.ts says why). A write that records its event in the same
-- statement as the change (issue 37: one data-modifying CTE) reads those events here and not in
-- the statement's own subquery because a statement keeps the snapshot it started with: when its
-- change waited on the record's row lock, a younger transaction's event committed during the wait
-- is not in that snapshot. A VOLATILE PL/pgSQL function takes a fresh snapshot for each query it
-- runs (READ COMMITTED), called for an event row only after the change locked the row.
CREATE FUNCTION event_tx_id(event_type text, record_id jsonb) RETURNS xid8 LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN GREATEST(pg_current_xact_id(), (
    SELECT e.tx_id FROM events e
    WHERE e.tx_id > pg_current_xact_id()
      AND split_part(e.type, '.', 1) = split_part(event_type, '.', 1)
      AND e.data->'id' = record_id
    ORDER BY e.tx_id DESC LIMIT 1));
END
$$;

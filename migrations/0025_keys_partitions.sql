-- Retention by partition for the request nonces and the Idempotency-Keys (issue 38): the daemon
-- creates partitions ahead and drops expired ones whole (jobs/Partitions.ts) instead of deleting
-- rows. A primary key of a partitioned table must hold its partition key, so (app_key, nonce) and
-- (app_key, key) can no longer be unique by a constraint across partitions; each table keeps its
-- guarantee another way (docs/operator.md, "Nonces and Idempotency-Keys by partition"):
--
-- request_nonces: partitioned by `slot_ms`, the start of an hour. A nonce seen at t is recorded in
-- every hour slot that [t, t + retention] touches (one row, or two in the last `retention` of an
-- hour), and the primary key is (app_key, nonce, slot_ms). Two sightings of a nonce within the
-- retention share the slot of the later one, so the admission's INSERT … ON CONFLICT meets the
-- earlier one on that slot's unique index: refused exactly as before, two API instances racing
-- included, in the same one statement (admitSql, src/repos/statements.ts). Partitions stay unlogged (migration 0013).
--
-- idempotency_keys: partitioned by `expires_at` (a partition whose upper bound is past holds only
-- expired keys). A key is claimed by idempotency_claim() below, which takes a transaction-level
-- advisory lock on the key (held until the claiming transaction commits or rolls back, where the
-- uncommitted row used to make a repeat wait) and then, in a fresh snapshot, looks for the key in
-- every partition: at most one row per (app_key, key) exists, as before.
--
-- Rows are moved in the migration's transaction. Partitions are made here for the hours (days)
-- around now; the daemon makes the next ones. A row no partition covers lands in the DEFAULT
-- partition (requests never fail while the daemon is down); the daemon deletes its expired rows.

-- Nonces ---------------------------------------------------------------------------------------

ALTER TABLE request_nonces RENAME TO request_nonces_before_0025;
ALTER TABLE request_nonces_before_0025 RENAME CONSTRAINT request_nonces_pkey TO request_nonces_before_0025_pkey;
DROP INDEX request_nonces_seen_idx;

CREATE TABLE request_nonces (
  app_key  text NOT NULL,
  nonce    text NOT NULL,
  -- When the nonce was seen (the API instance's clock, epoch ms), as before.
  seen_ms  bigint NOT NULL,
  -- The hour slot this row stands in (epoch ms of its start); a row per slot [seen_ms, seen_ms + retention] touches.
  slot_ms  bigint NOT NULL,
  PRIMARY KEY (app_key, nonce, slot_ms)
) PARTITION BY RANGE (slot_ms);

-- A partitioned table has no storage of its own (and cannot be unlogged): each partition is.
CREATE UNLOGGED TABLE request_nonces_default PARTITION OF request_nonces DEFAULT;

-- The previous hour through the next 24 (names as src/domain/partitions.ts makes them).
DO $$
DECLARE
  width bigint := 3600000;
  now_ms bigint := floor(extract(epoch FROM now()) * 1000)::bigint;
  slot bigint;
  starts timestamp;
BEGIN
  FOR slot IN SELECT generate_series((now_ms / width - 1) * width, (now_ms / width + 24) * width, width) LOOP
    starts := to_timestamp(slot / 1000.0) AT TIME ZONE 'UTC';
    EXECUTE format(
      'CREATE UNLOGGED TABLE %I PARTITION OF request_nonces FOR VALUES FROM (%s) TO (%s)',
      'request_nonces_p' || to_char(starts, 'YYYYMMDD')
        || CASE WHEN slot % 86400000 = 0 THEN '' ELSE '_' || to_char(starts, 'HH24MISS') END,
      slot, slot + width);
  END LOOP;
END
$$;

-- Each nonce seen so far stands in the slots an hour of retention touches (the retention is a
-- setting the migration does not know; the default is 15 minutes, and replays need only twice the
-- 5-minute timestamp window).
INSERT INTO request_nonces (app_key, nonce, seen_ms, slot_ms)
SELECT o.app_key, o.nonce, o.seen_ms, s.slot * 3600000
FROM request_nonces_before_0025 o
CROSS JOIN LATERAL generate_series(o.seen_ms / 3600000, (o.seen_ms + 3600000) / 3600000) AS s(slot);

DROP TABLE request_nonces_before_0025;

-- Idempotency-Keys -----------------------------------------------------------------------------

ALTER TABLE idempotency_keys RENAME TO idempotency_keys_before_0025;
ALTER TABLE idempotency_keys_before_0025 RENAME CONSTRAINT idempotency_keys_pkey TO idempotency_keys_before_0025_pkey;
ALTER TABLE idempotency_keys_before_0025 RENAME CONSTRAINT idempotency_keys_one_body TO idempotency_keys_before_0025_one_body;
DROP INDEX idempotency_keys_expires_idx;

CREATE TABLE idempotency_keys (
  app_key          text NOT NULL,
  key              text NOT NULL,
  fingerprint      text NOT NULL,
  response_status  integer,
  -- Answers kept in plain bytes before migration 0020 (until they expire or `keys rotate` seals them).
  response_body    bytea,
  response_type    text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  response_sealed  text,
  CONSTRAINT idempotency_keys_one_body CHECK (response_body IS NULL OR response_sealed IS NULL),
  -- Unique per (app_key, key) by idempotency_claim(), the only writer of new rows.
  PRIMARY KEY (app_key, key, expires_at)
) PARTITION BY RANGE (expires_at);

CREATE TABLE idempotency_keys_default PARTITION OF idempotency_keys DEFAULT;

-- Today (UTC) through two days ahead: a key claimed now with the default 24 h window expires tomorrow.
DO $$
DECLARE
  today date := (now() AT TIME ZONE 'UTC')::date;
  n integer;
BEGIN
  FOR n IN 0..2 LOOP
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF idempotency_keys FOR VALUES FROM (%L) TO (%L)',
      'idempotency_keys_p' || to_char(today + n, 'YYYYMMDD'),
      to_char(today + n, 'YYYY-MM-DD') || 'T00:00:00.000Z',
      to_char(today + n + 1, 'YYYY-MM-DD') || 'T00:00:00.000Z');
  END LOOP;
END
$$;

INSERT INTO idempotency_keys (app_key, key, fingerprint, response_status, response_body, response_type, created_at, expires_at, response_sealed)
SELECT app_key, key, fingerprint, response_status, response_body, response_type, created_at, expires_at, response_sealed
FROM idempotency_keys_before_0025;

DROP TABLE idempotency_keys_before_0025;

-- Claims `p_key` for `p_app_key` in the calling transaction (DECISIONS §11), for `p_ttl_seconds`;
-- false when the key is held by an unexpired claim. The advisory lock on the key is held until the
-- transaction ends: a concurrent claim of the key waits for it here (bounded by the caller's
-- lock_timeout), and, in READ COMMITTED, its next statement's snapshot sees what this one
-- committed. So at most one unexpired row per (app_key, key) exists, whichever partitions hold
-- rows of the key; an expired row of the key is removed as the new one is written.
CREATE FUNCTION idempotency_claim(p_app_key text, p_key text, p_fingerprint text, p_ttl_seconds float8)
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'idempotency_claim needs READ COMMITTED (a snapshot taken after its lock), not %',
      current_setting('transaction_isolation');
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended(p_app_key || E'\n' || p_key, 38));
  IF EXISTS (SELECT 1 FROM idempotency_keys WHERE app_key = p_app_key AND key = p_key AND expires_at > now()) THEN
    RETURN false;
  END IF;
  DELETE FROM idempotency_keys WHERE app_key = p_app_key AND key = p_key;
  INSERT INTO idempotency_keys (app_key, key, fingerprint, expires_at)
  VALUES (p_app_key, p_key, p_fingerprint, now() + make_interval(secs => p_ttl_seconds));
  RETURN true;
END
$$;

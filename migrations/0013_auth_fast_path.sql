-- Authentication in one round trip beside the endpoint's own statement: the nonce is recorded and,
-- when an instance's local share of the rate is used up, a lease of tokens is taken from the shared
-- bucket, in one statement (ReplayRepo.admit). Each API instance caches client rows and learns of
-- every change through NOTIFY on `clients_changed`.

-- Nonces and buckets are short-lived request state: unlogged, so recording a nonce does not wait
-- for a WAL flush and concurrent requests of one client do not queue on commit. Their visibility
-- across instances is the same as before. A PostgreSQL crash empties unlogged tables; the epoch
-- row below (gone with them) tells the service to refuse requests signed before the restart, so a
-- request seen before the crash cannot be replayed after it.
ALTER TABLE request_nonces SET UNLOGGED;
ALTER TABLE rate_buckets SET UNLOGGED;

-- Tokens handed out by the last lease (the statement's answer; UPDATE … RETURNING sees only new values).
ALTER TABLE rate_buckets ADD COLUMN granted double precision NOT NULL DEFAULT 0;

-- Since when (Unix seconds) the nonce record is complete. 0 until the first crash.
CREATE UNLOGGED TABLE nonce_epoch (
  id      integer PRIMARY KEY CHECK (id = 1),
  since_s bigint NOT NULL
);
INSERT INTO nonce_epoch (id, since_s) VALUES (1, 0);

-- The tokens of a bucket at `now_ms`: refilled at `rps` per second up to `burst`.
CREATE FUNCTION bucket_refill(tokens float8, updated_ms bigint, now_ms bigint, rps float8, burst float8)
RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT LEAST(burst, tokens + GREATEST(0, now_ms - updated_ms) * rps / 1000.0) $$;

-- Every change of a client (status, secrets, permissions, masking, rate) reaches the caches of all
-- API instances at commit.
CREATE FUNCTION clients_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('clients_changed', OLD.app_key);
  ELSE
    PERFORM pg_notify('clients_changed', NEW.app_key);
    IF TG_OP = 'UPDATE' AND OLD.app_key IS DISTINCT FROM NEW.app_key THEN
      PERFORM pg_notify('clients_changed', OLD.app_key);
    END IF;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER clients_notify AFTER INSERT OR UPDATE OR DELETE ON clients
  FOR EACH ROW EXECUTE FUNCTION clients_notify();

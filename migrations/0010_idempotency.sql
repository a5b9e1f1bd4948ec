-- Idempotent retries (DECISIONS §11): one row per client and Idempotency-Key, claimed by the
-- first attempt (the primary key makes the claim exactly-once across API instances) and holding
-- its response for the window.

CREATE TABLE idempotency_keys (
  app_key          text NOT NULL,
  key              text NOT NULL,
  fingerprint      text NOT NULL,
  state            text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done')),
  -- While running: the first attempt is presumed alive until then (a crashed instance frees it).
  lease_until      timestamptz NOT NULL,
  response_status  integer,
  response_body    bytea,
  response_type    text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (app_key, key)
);
-- The pruning job's scan.
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

-- Self-service limits (DECISIONS §13): per client and action (a rotation, a test event, a bulk
-- redelivery), the current window and the hits counted in it, shared by every API instance. One
-- row per client and action, updated in place by one statement (ActionWindowsRepo.hit), so the
-- table never holds more than four rows a client: nothing to prune. Short-lived request state like
-- the rate buckets: unlogged (a crash empties it, and every window starts afresh).
CREATE UNLOGGED TABLE action_windows (
  client_id       bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
  action          text   NOT NULL,
  window_start_ms bigint NOT NULL,
  hits            integer NOT NULL,
  PRIMARY KEY (client_id, action)
);

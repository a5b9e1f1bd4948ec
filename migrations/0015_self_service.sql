-- Self-service (DECISIONS §12): a client's own test event. `webhook.test` goes only to the client
-- that asked for it: the event names that client, the fan-out skips it (its one delivery is
-- created beside it), and the events feed never lists it.
ALTER TABLE events ADD COLUMN client_id bigint REFERENCES clients (id) ON DELETE CASCADE;

CREATE OR REPLACE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (event_id, client_id, next_attempt_at)
  SELECT e.id, c.id, now()
  FROM new_events e
  JOIN clients c ON c.webhook_enabled AND c.status = 'active' AND c.webhook_url IS NOT NULL
    AND e.type = ANY (c.webhook_events) AND e.permission = ANY (c.permissions)
  WHERE e.client_id IS NULL
  ON CONFLICT (event_id, client_id) DO NOTHING;
  IF FOUND THEN
    -- A payload is needed: listeners of @effect/sql-pg drop notifications with an empty one.
    PERFORM pg_notify('webhook_deliveries', 'due');
  END IF;
  RETURN NULL;
END
$$;

-- A client's own deliveries since a time (GET /webhook/deliveries?since=…, POST /webhook/redeliver).
CREATE INDEX webhook_deliveries_client_created_idx ON webhook_deliveries (client_id, created_at);

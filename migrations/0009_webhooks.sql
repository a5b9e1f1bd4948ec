-- Webhook delivery of the events outbox and the events feed (DECISIONS §9): one delivery per
-- (event, subscribed client), fanned out in the transaction that records the event; each attempt
-- kept for the operator; the feed's commit-safe order.

-- The transaction that wrote each event. Ids are taken before commit, so id order is not commit
-- order; the feed orders by (tx_id, id) and shows only events whose transaction is older than
-- every transaction still running, so a reader's cursor never passes an event yet to commit.
ALTER TABLE events ADD COLUMN tx_id xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX events_feed_idx ON events (tx_id, id);
-- Pruning by age (the 30 days of the feed).
CREATE INDEX events_created_at_idx ON events (created_at);

CREATE TABLE webhook_deliveries (
  id              bigserial PRIMARY KEY,
  event_id        bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  client_id       bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  -- Attempts made (numbers every attempt of the delivery, redeliveries included).
  attempt_count   integer NOT NULL DEFAULT 0,
  -- Retries used in the current round of the schedule (a redelivery starts a new round).
  schedule_step   integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  -- The daemon worker holding the delivery during an attempt, until lease_until.
  locked_by       text,
  lease_until     timestamptz,
  last_status     integer,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, client_id),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
-- The runner's queue, per client: claims take each client's oldest due deliveries, and when the
-- next one comes due is read per client too. No index orders all clients' deliveries together:
-- walking it, a client would scan past the backlog of a slow one.
CREATE INDEX webhook_deliveries_queue_idx ON webhook_deliveries (client_id, next_attempt_at, id) WHERE status = 'pending';
-- Attempts in flight per client (the per-client concurrency bound).
CREATE INDEX webhook_deliveries_inflight_idx ON webhook_deliveries (client_id) WHERE locked_by IS NOT NULL;
-- The operator's listings: by client, by status, newest first.
CREATE INDEX webhook_deliveries_client_idx ON webhook_deliveries (client_id, id DESC);
CREATE INDEX webhook_deliveries_status_idx ON webhook_deliveries (status, id DESC);

CREATE TABLE webhook_attempts (
  delivery_id     bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt         integer NOT NULL,
  attempted_at    timestamptz NOT NULL,
  duration_ms     integer NOT NULL,
  status_code     integer,
  error           text,
  response        text,
  -- The daemon worker that made the attempt.
  worker          text NOT NULL,
  -- What the attempt decided: the next attempt's time, or null when it was final.
  next_attempt_at timestamptz,
  -- One row per attempt number: a second daemon can never record the same attempt.
  PRIMARY KEY (delivery_id, attempt)
);

-- Fan-out at commit time: the statement that records events also creates one delivery per client
-- that subscribed to the type, holds the event's read permission and is active with its webhook
-- on, and wakes the daemons (NOTIFY is delivered when the transaction commits). Written as a
-- trigger so that every writer of the outbox fans out the same way.
CREATE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (event_id, client_id, next_attempt_at)
  SELECT e.id, c.id, now()
  FROM new_events e
  JOIN clients c ON c.webhook_enabled AND c.status = 'active' AND c.webhook_url IS NOT NULL
    AND e.type = ANY (c.webhook_events) AND e.permission = ANY (c.permissions)
  ON CONFLICT (event_id, client_id) DO NOTHING;
  IF FOUND THEN
    -- A payload is needed: listeners of @effect/sql-pg drop notifications with an empty one.
    PERFORM pg_notify('webhook_deliveries', 'due');
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER events_fan_out AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_fan_out();


-- A daemon's claim: the oldest due deliveries of each client, as many as the client's free slots
-- (its attempts in flight under a live lease count against them), then the oldest of those up to
-- the daemon's free slots, locked with SKIP LOCKED and leased to the worker; with what each attempt
-- needs (the event, the client as it is now). A client at its bound is not even scanned, so its
-- backlog delays no other client. Claims are serialised by a transaction-level advisory lock and,
-- the function being volatile, its query sees every claim committed before (and the event of
-- every delivery it claims), so the in-flight count is exact across daemons.
CREATE FUNCTION webhook_claim(p_worker text, p_free integer, p_per_client integer, p_lease_ms double precision)
RETURNS TABLE (
  id bigint, attempt integer, schedule_step integer, event_id text, type text, permission text, data jsonb,
  created_at timestamptz, client_id bigint, app_key text, status text, permissions text[], masking boolean,
  webhook_url text, webhook_events text[], webhook_enabled boolean, webhook_secret_enc text,
  webhook_prev_secret_enc text, webhook_prev_expires_at timestamptz
)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM pg_advisory_xact_lock(7270091);
  RETURN QUERY
  WITH inflight AS (
    SELECT w.client_id, count(*)::integer AS n FROM webhook_deliveries w
    WHERE w.locked_by IS NOT NULL AND w.lease_until > now() GROUP BY w.client_id
  ), picked AS (
    SELECT q.id FROM clients c
    LEFT JOIN inflight i ON i.client_id = c.id
    CROSS JOIN LATERAL (
      SELECT w.id, w.next_attempt_at FROM webhook_deliveries w
      WHERE w.client_id = c.id AND w.status = 'pending' AND w.next_attempt_at <= now()
        AND (w.locked_by IS NULL OR w.lease_until <= now())
      ORDER BY w.next_attempt_at, w.id
      LIMIT greatest(p_per_client - coalesce(i.n, 0), 0)
      FOR UPDATE OF w SKIP LOCKED
    ) q
    ORDER BY q.next_attempt_at, q.id
    LIMIT p_free
  ), claimed AS (
    UPDATE webhook_deliveries d SET locked_by = p_worker, lease_until = now() + p_lease_ms * interval '1 millisecond',
      attempt_count = d.attempt_count + 1, updated_at = now()
    FROM picked WHERE d.id = picked.id
    RETURNING d.id, d.attempt_count, d.schedule_step, d.event_id, d.client_id
  )
  SELECT k.id, k.attempt_count, k.schedule_step, e.event_id, e.type, e.permission, e.data, e.created_at, c.id, c.app_key,
    c.status, c.permissions, c.masking, c.webhook_url, c.webhook_events, c.webhook_enabled, c.webhook_secret_enc,
    c.webhook_prev_secret_enc, c.webhook_prev_expires_at
  FROM claimed k JOIN events e ON e.id = k.event_id JOIN clients c ON c.id = k.client_id
  ORDER BY k.id;
END
$$;

-- Records finished attempts (a JSON array of records) and their decisions: each only while its
-- worker still holds that attempt of the delivery; a 410 also turns the client's webhook off.
-- Returns the deliveries recorded.
CREATE FUNCTION webhook_record(p_records jsonb) RETURNS SETOF bigint LANGUAGE sql VOLATILE AS $$
  WITH input AS (
    SELECT * FROM jsonb_to_recordset(p_records) AS i(id bigint, worker text, attempt integer, status text, step integer,
      delay_ms double precision, attempted_at_ms double precision, duration_ms integer, status_code integer, error text,
      response text, client_id bigint, turn_off boolean)
  ), updated AS (
    UPDATE webhook_deliveries d SET status = i.status, schedule_step = i.step,
      next_attempt_at = CASE WHEN i.status = 'pending' THEN now() + i.delay_ms * interval '1 millisecond' END,
      locked_by = NULL, lease_until = NULL, last_status = i.status_code, last_error = i.error, updated_at = now()
    FROM input i
    WHERE d.id = i.id AND d.locked_by = i.worker AND d.attempt_count = i.attempt
    RETURNING d.id, d.next_attempt_at
  ), turned_off AS (
    UPDATE clients SET webhook_enabled = false, updated_at = now()
    WHERE id IN (SELECT i.client_id FROM input i JOIN updated u ON u.id = i.id WHERE i.turn_off)
  )
  INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms, status_code, error, response, next_attempt_at, worker)
  SELECT i.id, i.attempt, to_timestamp(i.attempted_at_ms / 1000), i.duration_ms, i.status_code, i.error, i.response,
    u.next_attempt_at, i.worker
  FROM input i JOIN updated u ON u.id = i.id
  RETURNING delivery_id
$$;

-- A daemon's whole turn in one round trip: record the attempts that finished, then claim into the
-- slots they freed (the claim sees the records, so a finished attempt's slot is reused at once).
CREATE FUNCTION webhook_cycle(p_records jsonb, p_worker text, p_free integer, p_per_client integer, p_lease_ms double precision)
RETURNS TABLE (
  recorded boolean, id bigint, attempt integer, schedule_step integer, event_id text, type text, permission text,
  data jsonb, created_at timestamptz, client_id bigint, app_key text, status text, permissions text[], masking boolean,
  webhook_url text, webhook_events text[], webhook_enabled boolean, webhook_secret_enc text,
  webhook_prev_secret_enc text, webhook_prev_expires_at timestamptz
)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF jsonb_array_length(p_records) > 0 THEN
    RETURN QUERY SELECT true, r.r, NULL::integer, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::jsonb,
      NULL::timestamptz, NULL::bigint, NULL::text, NULL::text, NULL::text[], NULL::boolean, NULL::text, NULL::text[],
      NULL::boolean, NULL::text, NULL::text, NULL::timestamptz
      FROM webhook_record(p_records) AS r(r);
  END IF;
  IF p_free > 0 THEN
    RETURN QUERY SELECT false, k.* FROM webhook_claim(p_worker, p_free, p_per_client, p_lease_ms) AS k;
  END IF;
END
$$;

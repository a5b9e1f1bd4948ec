-- Retention by partition (issue 38): the events outbox, its webhook deliveries and their attempts
-- become tables partitioned by range on the event's time, one partition a week by default
-- (EVENTS_PARTITION_DAYS; weeks of the daemon's grid: 7-day multiples from the Unix epoch, Thursday
-- 00:00 UTC), so that the daemon's retention drops a whole week of each (jobs/Partitions.ts) instead
-- of deleting rows, which at millions of rows a day left bloat and long vacuums. A week, not a day:
-- each insert of an event plans and locks every partition of `events` (its tx_id raise reads the
-- record's younger events in all of them), and with 30 days kept a day each meant ~35 partitions
-- (an event insert measured 4.8x the unpartitioned table's cost), a week each ~8 (2.1x).
--
-- * events is partitioned on created_at; webhook_deliveries and webhook_attempts on the time of
--   their event (event_created_at, a new column of each): a week's deliveries and attempts are in
--   that week's partitions of theirs, and go when the week's events go, in one transaction.
-- * A primary key or unique constraint of a partitioned table must hold its partition key: events
--   is keyed (id, created_at), deliveries (id, event_created_at), attempts (delivery_id, attempt,
--   event_created_at). The ids stay unique because their sequences make them (events_id_seq,
--   webhook_deliveries_id_seq, kept and owned by the new columns), and an event's time is
--   one per event, so (event_id, client_id, event_created_at) is the one delivery per (event,
--   client) of the fan-out, which keeps its ON CONFLICT. The public event id (`evt_` and 96
--   random bits, made only by the service) can no longer be declared unique across partitions; it
--   is indexed in each partition for the feed's cursor (one index probe per partition).
-- * The foreign keys between the three tables go: PostgreSQL checks a partition detached from a
--   referenced table by joining its rows with the whole referencing table, and cascading deletes
--   are what partitions replace. Deliveries and attempts are only ever written with their event
--   (the fan-out trigger, the webhook test's statement, an attempt recorded from its claimed
--   delivery) and go with its partition, so none is left without its event.
-- * Every index the feed and the webhook queue read is kept, per partition: (tx_id, id) for the
--   feed's order, the queue's partial indexes, the listings'. events_created_idx (a copy of the
--   primary key's index) and events_created_at_idx (the old DELETE's) go: partitions prune by time.
-- * Each table has a DEFAULT partition: a row whose time no partition covers yet (the daemon did
--   not run for longer than PARTITIONS_AHEAD_DAYS) is kept there, never refused, and the daemon
--   moves it into its partition when it creates it.
-- * Partitions: one a week from the week of the oldest event (or this week) through the week that
--   holds now + 7 days; if events older than 9 weeks exist (kept past the retention by a pending
--   delivery), one partition from MINVALUE holds everything before those 9 weeks (the daemon drops
--   it once past retention).
--
-- The migrator runs this in one transaction: the rows are copied into the new tables, the old
-- ones dropped and the new ones take their names, indexes, triggers and sequences.

ALTER SEQUENCE events_id_seq OWNED BY NONE;
ALTER SEQUENCE webhook_deliveries_id_seq OWNED BY NONE;
ALTER TABLE webhook_attempts RENAME TO webhook_attempts_old;
ALTER TABLE webhook_deliveries RENAME TO webhook_deliveries_old;
ALTER TABLE events RENAME TO events_old;

CREATE TABLE events (
  id          bigint NOT NULL DEFAULT nextval('events_id_seq'),
  event_id    text NOT NULL,
  type        text NOT NULL,
  permission  text NOT NULL,
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  tx_id       xid8 NOT NULL DEFAULT pg_current_xact_id(),
  client_id   bigint,
  company_ids bigint[] NOT NULL DEFAULT '{}'
) PARTITION BY RANGE (created_at);

CREATE TABLE webhook_deliveries (
  id               bigint NOT NULL DEFAULT nextval('webhook_deliveries_id_seq'),
  event_id         bigint NOT NULL,
  client_id        bigint NOT NULL,
  status           text NOT NULL DEFAULT 'pending',
  attempt_count    integer NOT NULL DEFAULT 0,
  schedule_step    integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,
  locked_by        text,
  lease_until      timestamptz,
  last_status      integer,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  -- The created_at of the delivery's event: the partition key.
  event_created_at timestamptz NOT NULL,
  CONSTRAINT webhook_deliveries_status_check CHECK (status IN ('pending', 'succeeded', 'failed')),
  CONSTRAINT webhook_deliveries_check CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
) PARTITION BY RANGE (event_created_at);

CREATE TABLE webhook_attempts (
  delivery_id      bigint NOT NULL,
  attempt          integer NOT NULL,
  attempted_at     timestamptz NOT NULL,
  duration_ms      integer NOT NULL,
  status_code      integer,
  error            text,
  response         text,
  worker           text NOT NULL,
  next_attempt_at  timestamptz,
  -- The created_at of the attempt's delivery's event: the partition key.
  event_created_at timestamptz NOT NULL
) PARTITION BY RANGE (event_created_at);

DO $$
DECLARE
  week interval := interval '168 hours';
  -- Weeks on the daemon's grid (src/domain/partitions.ts): multiples of 7 days from the Unix epoch.
  this_week timestamptz := to_timestamp(floor(extract(epoch FROM now()) / 604800) * 604800);
  first_week timestamptz;
  w timestamptz;
  t text;
BEGIN
  SELECT to_timestamp(floor(extract(epoch FROM min(created_at)) / 604800) * 604800) INTO first_week FROM events_old;
  first_week := LEAST(COALESCE(first_week, this_week), this_week);
  IF first_week < this_week - 9 * week THEN
    first_week := this_week - 9 * week;
    FOREACH t IN ARRAY ARRAY['events', 'webhook_deliveries', 'webhook_attempts'] LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (MINVALUE) TO (%L)', t || '_p_before', t, first_week);
    END LOOP;
  END IF;
  w := first_week;
  -- Through the week that holds now + 7 days (PARTITIONS_AHEAD_DAYS' default).
  WHILE w <= now() + interval '168 hours' LOOP
    FOREACH t IN ARRAY ARRAY['events', 'webhook_deliveries', 'webhook_attempts'] LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
        t || '_p' || to_char(w AT TIME ZONE 'UTC', 'YYYYMMDD'), t, w, w + week);
    END LOOP;
    w := w + week;
  END LOOP;
  FOREACH t IN ARRAY ARRAY['events', 'webhook_deliveries', 'webhook_attempts'] LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', t || '_default', t);
  END LOOP;
END
$$;

INSERT INTO events (id, event_id, type, permission, data, created_at, tx_id, client_id, company_ids)
SELECT id, event_id, type, permission, data, created_at, tx_id, client_id, company_ids FROM events_old;

INSERT INTO webhook_deliveries (id, event_id, client_id, status, attempt_count, schedule_step, next_attempt_at, locked_by,
  lease_until, last_status, last_error, created_at, updated_at, event_created_at)
SELECT d.id, d.event_id, d.client_id, d.status, d.attempt_count, d.schedule_step, d.next_attempt_at, d.locked_by,
  d.lease_until, d.last_status, d.last_error, d.created_at, d.updated_at, e.created_at
FROM webhook_deliveries_old d JOIN events_old e ON e.id = d.event_id;

INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms, status_code, error, response, worker,
  next_attempt_at, event_created_at)
SELECT a.delivery_id, a.attempt, a.attempted_at, a.duration_ms, a.status_code, a.error, a.response, a.worker,
  a.next_attempt_at, e.created_at
FROM webhook_attempts_old a JOIN webhook_deliveries_old d ON d.id = a.delivery_id JOIN events_old e ON e.id = d.event_id;

DROP TABLE webhook_attempts_old;
DROP TABLE webhook_deliveries_old;
DROP TABLE events_old;

ALTER SEQUENCE events_id_seq OWNED BY events.id;
ALTER SEQUENCE webhook_deliveries_id_seq OWNED BY webhook_deliveries.id;

ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (id, created_at);
ALTER TABLE events ADD CONSTRAINT events_client_id_fkey FOREIGN KEY (client_id) REFERENCES clients (id) ON DELETE CASCADE;
-- The feed's cursor: an event id's place (one probe per partition).
CREATE INDEX events_event_id_idx ON events (event_id);
-- The feed's commit-safe order (DECISIONS §12), and event_tx_id's read of a record's younger events.
CREATE INDEX events_feed_idx ON events (tx_id, id);

ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id, event_created_at);
-- One delivery per (event, client): the fan-out's ON CONFLICT.
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_client_id_key UNIQUE (event_id, client_id, event_created_at);
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_client_id_fkey FOREIGN KEY (client_id) REFERENCES clients (id) ON DELETE CASCADE;
CREATE INDEX webhook_deliveries_queue_idx ON webhook_deliveries (client_id, next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_inflight_idx ON webhook_deliveries (client_id) WHERE locked_by IS NOT NULL;
CREATE INDEX webhook_deliveries_client_idx ON webhook_deliveries (client_id, id DESC);
CREATE INDEX webhook_deliveries_status_idx ON webhook_deliveries (status, id DESC);
CREATE INDEX webhook_deliveries_client_created_idx ON webhook_deliveries (client_id, created_at);
CREATE INDEX webhook_deliveries_sync_idx ON webhook_deliveries (client_id, updated_at, id);

-- One row per attempt number of a delivery: a second daemon can never record the same attempt.
ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (delivery_id, attempt, event_created_at);
CREATE INDEX webhook_attempts_attempted_idx ON webhook_attempts (attempted_at);

-- The companies of an event (migration 0022), on the partitioned table: PostgreSQL clones a row
-- trigger of the parent onto every partition, those attached later included.
CREATE TRIGGER events_company_ids BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION events_company_ids();

-- The fan-out (migrations 0009, 0015, 0022) writes the delivery's event time, and its ON CONFLICT
-- names the unique key that holds it. A statement trigger with a transition table on the
-- partitioned parent sees every row the statement inserted, whichever partition holds it.
CREATE OR REPLACE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (event_id, event_created_at, client_id, next_attempt_at)
  SELECT e.id, e.created_at, c.id, now()
  FROM new_events e
  JOIN clients c ON c.webhook_enabled AND c.status = 'active' AND c.webhook_url IS NOT NULL
    AND e.type = ANY (c.webhook_events) AND e.permission = ANY (c.permissions)
  WHERE e.client_id IS NULL
    AND (NOT c.scoped OR EXISTS (
      SELECT 1 FROM client_companies cc WHERE cc.client_id = c.id AND cc.company_id = ANY (e.company_ids)))
  ON CONFLICT (event_id, client_id, event_created_at) DO NOTHING;
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

-- The claim (migration 0009) reads each claimed delivery's event by its key, time included (one
-- partition, not every one).
CREATE OR REPLACE FUNCTION webhook_claim(p_worker text, p_free integer, p_per_client integer, p_lease_ms double precision)
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
    RETURNING d.id, d.attempt_count, d.schedule_step, d.event_id, d.event_created_at, d.client_id
  )
  SELECT k.id, k.attempt_count, k.schedule_step, e.event_id, e.type, e.permission, e.data, e.created_at, c.id, c.app_key,
    c.status, c.permissions, c.masking, c.webhook_url, c.webhook_events, c.webhook_enabled, c.webhook_secret_enc,
    c.webhook_prev_secret_enc, c.webhook_prev_expires_at
  FROM claimed k JOIN events e ON e.id = k.event_id AND e.created_at = k.event_created_at JOIN clients c ON c.id = k.client_id
  ORDER BY k.id;
END
$$;

-- Recording an attempt (migration 0009) writes its event's time beside it, from its delivery.
CREATE OR REPLACE FUNCTION webhook_record(p_records jsonb) RETURNS SETOF bigint LANGUAGE sql VOLATILE AS $$
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
    RETURNING d.id, d.next_attempt_at, d.event_created_at
  ), turned_off AS (
    UPDATE clients SET webhook_enabled = false, updated_at = now()
    WHERE id IN (SELECT i.client_id FROM input i JOIN updated u ON u.id = i.id WHERE i.turn_off)
  )
  INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms, status_code, error, response, next_attempt_at,
    worker, event_created_at)
  SELECT i.id, i.attempt, to_timestamp(i.attempted_at_ms / 1000), i.duration_ms, i.status_code, i.error, i.response,
    u.next_attempt_at, i.worker, u.event_created_at
  FROM input i JOIN updated u ON u.id = i.id
  RETURNING delivery_id
$$;

-- One row per job daemon process (its heartbeat): which daemons are alive, what they run and when
-- each job last ran. A daemon beats every few seconds; one that has not beaten within three of its
-- intervals is dead (killed, host gone), one that stopped cleanly says so in stopped_at.
CREATE TABLE daemon_heartbeats (
  -- host:pid:random, the prefix of the lock holder names the daemon writes (card_tasks.locked_by).
  instance_id      text PRIMARY KEY,
  host             text NOT NULL,
  pid              integer NOT NULL,
  started_at       timestamptz NOT NULL,
  last_beat_at     timestamptz NOT NULL,
  -- The daemon's own beat interval, so that liveness is judged by the interval it promised.
  interval_seconds double precision NOT NULL CHECK (interval_seconds > 0),
  -- Per job: runs, failures, failures in the last hour, the last run's start, end, duration and outcome.
  jobs             jsonb NOT NULL DEFAULT '{}',
  stopped_at       timestamptz
);
-- The listing (newest beat first) and the pruning of long-dead rows.
CREATE INDEX daemon_heartbeats_beat_idx ON daemon_heartbeats (last_beat_at DESC);

-- The "failures in the last hour" of the queue statistics (admin status, /metrics) read recent
-- failures only, so a scrape every few seconds stays cheap on large tables.
CREATE INDEX card_tasks_failed_idx ON card_tasks (completed_at) WHERE status = 'failed';
CREATE INDEX webhook_attempts_attempted_idx ON webhook_attempts (attempted_at);

-- Image blacklist (SPEC §2.7) and guest-card import tasks (SPEC §3.2, DECISIONS §8).

CREATE TABLE image_blacklist (
  id            bigserial PRIMARY KEY,
  md5           text NOT NULL UNIQUE CHECK (md5 ~ '^[0-9a-f]{32}$'),
  source        text NOT NULL DEFAULT 'external' CHECK (source IN ('external', 'upload', 'manual', 'sync')),
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  reject_reason text NOT NULL,
  hit_count     integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX image_blacklist_status_idx ON image_blacklist (status, id DESC);
CREATE INDEX image_blacklist_source_idx ON image_blacklist (source, id DESC);

-- The image a guest was created from, for duplicate detection per matchmaker.
ALTER TABLE guests ADD COLUMN image_hash text;
CREATE UNIQUE INDEX guests_matchmaker_image_key ON guests (matchmaker_id, image_hash) WHERE image_hash IS NOT NULL;

CREATE TABLE card_tasks (
  id            bigserial PRIMARY KEY,
  task_id       text NOT NULL UNIQUE,
  matchmaker_id bigint NOT NULL REFERENCES matchmakers (id),
  company_id    bigint NOT NULL REFERENCES companies (id),
  image_hash    text NOT NULL,
  image         bytea NOT NULL,
  content_type  text NOT NULL,
  overrides     jsonb NOT NULL DEFAULT '{}',
  client_app_key text,
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'done', 'failed')),
  attempts      integer NOT NULL DEFAULT 0,
  locked_by     text,
  lease_until   timestamptz,
  result        jsonb,
  error         text,
  guest_id      bigint REFERENCES guests (id),
  created_at    timestamptz NOT NULL DEFAULT now(),
  started_at    timestamptz,
  completed_at  timestamptz
);
-- One open task per image and matchmaker: a repeated upload gets the same task back.
CREATE UNIQUE INDEX card_tasks_open_key ON card_tasks (matchmaker_id, image_hash) WHERE status IN ('pending', 'processing');
-- The runner's queue: pending tasks in age order, and processing ones whose lease may expire.
CREATE INDEX card_tasks_queue_idx ON card_tasks (created_at) WHERE status IN ('pending', 'processing');

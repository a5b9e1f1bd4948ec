-- Work WeChat accounts, their associations and logs; platform users (user attribution); WeChat
-- groups with their members and logs (SPEC §2.4, §2.5; DECISIONS §5).

CREATE TABLE work_wechats (
  id              bigserial PRIMARY KEY,
  admin_id        bigint,
  wechat_number   text NOT NULL,
  phone           text NOT NULL,
  device_id       text,
  wechat_nickname text,
  avatar          text,
  qr_code         text,
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  remark          text,
  deleted_at      timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
-- Unique among live accounts: a soft delete releases the values.
CREATE UNIQUE INDEX work_wechats_wechat_number_key ON work_wechats (wechat_number) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX work_wechats_phone_key ON work_wechats (phone) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX work_wechats_device_id_key ON work_wechats (device_id)
  WHERE deleted_at IS NULL AND device_id IS NOT NULL AND device_id <> '';
CREATE INDEX work_wechats_status_idx ON work_wechats (status, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX work_wechats_live_idx ON work_wechats (id DESC) WHERE deleted_at IS NULL;
CREATE INDEX work_wechats_keyword_trgm_idx ON work_wechats USING gin (
  (lower(wechat_number) || ' ' || phone || ' ' || lower(coalesce(device_id, '')) || ' ' || lower(coalesce(wechat_nickname, ''))) gin_trgm_ops
);

CREATE TABLE work_wechat_associations (
  id             bigserial PRIMARY KEY,
  work_wechat_id bigint NOT NULL REFERENCES work_wechats (id),
  target_type    text NOT NULL CHECK (target_type IN ('matchmaker', 'company', 'franchisee')),
  target_id      bigint NOT NULL,
  remark         text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (work_wechat_id, target_type, target_id)
);
CREATE INDEX work_wechat_associations_target_idx ON work_wechat_associations (target_type, target_id);

CREATE TABLE work_wechat_logs (
  id             bigserial PRIMARY KEY,
  work_wechat_id bigint NOT NULL REFERENCES work_wechats (id),
  action         text NOT NULL,
  target_type    text,
  target_id      bigint,
  from_value     text,
  to_value       text,
  operator_id    bigint NOT NULL,
  operator_name  text NOT NULL,
  remark         text,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX work_wechat_logs_account_idx ON work_wechat_logs (work_wechat_id, id DESC);

CREATE TABLE users (
  id             bigserial PRIMARY KEY,
  name           text NOT NULL,
  phone          text,
  work_wechat_id bigint REFERENCES work_wechats (id),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX users_work_wechat_idx ON users (work_wechat_id) WHERE work_wechat_id IS NOT NULL;

CREATE TABLE work_groups (
  id         bigserial PRIMARY KEY,
  name       text NOT NULL,
  group_no   text NOT NULL DEFAULT '',
  qr_code    text,
  status     text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  remark     text,
  deleted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX work_groups_group_no_key ON work_groups (group_no) WHERE deleted_at IS NULL AND group_no <> '';
CREATE INDEX work_groups_status_idx ON work_groups (status, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX work_groups_live_idx ON work_groups (id DESC) WHERE deleted_at IS NULL;
CREATE INDEX work_groups_keyword_trgm_idx ON work_groups USING gin (
  (lower(name) || ' ' || lower(group_no) || ' ' || lower(coalesce(remark, ''))) gin_trgm_ops
);

CREATE TABLE work_group_matchmakers (
  id            bigserial PRIMARY KEY,
  work_group_id bigint NOT NULL REFERENCES work_groups (id),
  matchmaker_id bigint NOT NULL REFERENCES matchmakers (id),
  remark        text,
  joined_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (work_group_id, matchmaker_id)
);
CREATE INDEX work_group_matchmakers_matchmaker_idx ON work_group_matchmakers (matchmaker_id, work_group_id);

CREATE TABLE work_group_work_wechats (
  id             bigserial PRIMARY KEY,
  work_group_id  bigint NOT NULL REFERENCES work_groups (id),
  work_wechat_id bigint NOT NULL REFERENCES work_wechats (id),
  remark         text,
  joined_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (work_group_id, work_wechat_id)
);
CREATE INDEX work_group_work_wechats_account_idx ON work_group_work_wechats (work_wechat_id, work_group_id);

CREATE TABLE work_group_logs (
  id            bigserial PRIMARY KEY,
  work_group_id bigint NOT NULL REFERENCES work_groups (id),
  action        text NOT NULL,
  target_type   text,
  target_id     bigint,
  from_value    text,
  to_value      text,
  operator_id   bigint NOT NULL,
  operator_name text NOT NULL,
  remark        text,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX work_group_logs_group_idx ON work_group_logs (work_group_id, id DESC);

-- Activities with their registrations (SPEC §2.9, §4.8), membership plans and memberships
-- (§2.11, §4.10), and the indexes behind their lists and the job daemon's time-driven moves
-- (DECISIONS §5, §7).

CREATE TABLE activities (
  id                bigserial PRIMARY KEY,
  title             text NOT NULL,
  description       text,
  cover_url         text,
  address           text NOT NULL,
  start_time        timestamptz NOT NULL,
  end_time          timestamptz NOT NULL,
  -- Null: unlimited; 0: no places for that gender.
  male_quota        integer CHECK (male_quota >= 0),
  female_quota      integer CHECK (female_quota >= 0),
  male_fee          numeric(10, 2) NOT NULL DEFAULT 0 CHECK (male_fee >= 0),
  female_fee        numeric(10, 2) NOT NULL DEFAULT 0 CHECK (female_fee >= 0),
  -- Places taken per gender: a registration moves its counter with one conditional UPDATE that
  -- never passes the quota, so concurrent registrations cannot overbook (the CHECKs say so too).
  male_registered   integer NOT NULL DEFAULT 0,
  female_registered integer NOT NULL DEFAULT 0,
  status            text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'registering', 'ongoing', 'ended')),
  audit_status      text NOT NULL DEFAULT 'pending' CHECK (audit_status IN ('pending', 'approved', 'rejected')),
  company_id        bigint NOT NULL REFERENCES companies (id),
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CHECK (end_time > start_time),
  CHECK (male_quota IS NULL OR male_registered <= male_quota),
  CHECK (female_quota IS NULL OR female_registered <= female_quota)
);
-- List filters (newest first).
CREATE INDEX activities_status_idx ON activities (status, id DESC);
CREATE INDEX activities_company_idx ON activities (company_id, id DESC);
-- The daemon's moves: registering → ongoing at start_time, ongoing → ended at end_time.
CREATE INDEX activities_starting_idx ON activities (start_time) WHERE status = 'registering';
CREATE INDEX activities_ending_idx ON activities (end_time) WHERE status = 'ongoing';

-- One registration per guest and activity (DECISIONS §4 names the record's fields).
CREATE TABLE activity_registrations (
  id            bigserial PRIMARY KEY,
  activity_id   bigint NOT NULL REFERENCES activities (id),
  guest_id      bigint NOT NULL REFERENCES guests (id),
  name          text,
  phone         text,
  remark        text,
  fee           numeric(10, 2) NOT NULL,
  registered_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT activity_registrations_guest_key UNIQUE (activity_id, guest_id)
);
CREATE INDEX activity_registrations_guest_idx ON activity_registrations (guest_id);

CREATE TABLE membership_plans (
  id         serial PRIMARY KEY,
  name       text NOT NULL,
  days       integer NOT NULL CHECK (days > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The three seeded plans of DECISIONS §3, with fixed ids; plans the operator adds start at 4.
INSERT INTO membership_plans (id, name, days) VALUES (1, '月度会员', 30), (2, '季度会员', 90), (3, '年度会员', 365);
SELECT setval(pg_get_serial_sequence('membership_plans', 'id'), 3);

CREATE TABLE memberships (
  id         bigserial PRIMARY KEY,
  user_id    bigint NOT NULL REFERENCES users (id),
  guest_id   bigint REFERENCES guests (id),
  plan_id    integer NOT NULL REFERENCES membership_plans (id),
  status     text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'expired', 'cancelled')),
  started_at timestamptz NOT NULL DEFAULT now(),
  expire_at  timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- At most one active membership per user and plan: create-or-renew is one upsert on it, so two
-- concurrent purchases extend one record instead of making two.
CREATE UNIQUE INDEX memberships_active_plan_key ON memberships (user_id, plan_id) WHERE status = 'active';
-- List filters: user, status, and the company of the linked guest (through guest_id).
CREATE INDEX memberships_user_idx ON memberships (user_id, id DESC);
CREATE INDEX memberships_status_idx ON memberships (status, id DESC);
CREATE INDEX memberships_guest_idx ON memberships (guest_id, id DESC) WHERE guest_id IS NOT NULL;
-- The daemon's move: active → expired at expire_at.
CREATE INDEX memberships_expiring_idx ON memberships (expire_at) WHERE status = 'active';

-- Matches filtered by company read the guests of that company (guests_company_created_idx), then
-- the matches on either side (matches_guest_a_idx, matches_guest_b_idx): no extra match index.

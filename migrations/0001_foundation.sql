-- Foundation: API clients and their replay/rate state, companies, matchmakers, events outbox.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE clients (
  id                      bigserial PRIMARY KEY,
  app_key                 text NOT NULL UNIQUE,
  name                    text NOT NULL,
  status                  text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  permissions             text[] NOT NULL DEFAULT '{}',
  masking                 boolean NOT NULL DEFAULT false,
  secret_enc              text NOT NULL,
  prev_secret_enc         text,
  prev_secret_expires_at  timestamptz,
  rate_rps                double precision,
  rate_burst              integer,
  webhook_url             text,
  webhook_events          text[] NOT NULL DEFAULT '{}',
  webhook_enabled         boolean NOT NULL DEFAULT false,
  webhook_secret_enc      text,
  webhook_prev_secret_enc text,
  webhook_prev_expires_at timestamptz,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now()
);

-- Nonces seen per app_key; shared by every API instance. Pruned by the job daemon.
CREATE TABLE request_nonces (
  app_key  text NOT NULL,
  nonce    text NOT NULL,
  seen_ms  bigint NOT NULL,
  PRIMARY KEY (app_key, nonce)
);
CREATE INDEX request_nonces_seen_idx ON request_nonces (seen_ms);

-- Token buckets per app_key, shared by every API instance (DECISIONS §10).
CREATE TABLE rate_buckets (
  app_key    text PRIMARY KEY,
  tokens     double precision NOT NULL,
  updated_ms bigint NOT NULL
);

CREATE TABLE companies (
  id            bigserial PRIMARY KEY,
  name          text NOT NULL,
  contact_name  text,
  contact_phone text,
  province      text,
  city          text,
  district      text,
  address       text,
  credit_code   text,
  logo_url      text,
  company_type  text NOT NULL DEFAULT 'normal' CHECK (company_type IN ('normal', 'franchisee')),
  cert_level    text NOT NULL DEFAULT 'none' CHECK (cert_level IN ('none', 'junior', 'intermediate', 'senior')),
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('frozen', 'active', 'pending', 'rejected')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX companies_status_idx ON companies (status, id DESC);
CREATE INDEX companies_city_idx ON companies (city, id DESC);
CREATE INDEX companies_name_trgm_idx ON companies USING gin (lower(name) gin_trgm_ops);

CREATE TABLE matchmakers (
  id            bigserial PRIMARY KEY,
  company_id    bigint REFERENCES companies (id),
  store_id      bigint,
  name          text NOT NULL,
  phone         text,
  wechat        text,
  wechat_id     text,
  country       text,
  province      text,
  city          text,
  avatar        text,
  years_exp     integer,
  specialty     text,
  intro         text,
  -- Counters kept in the same transaction as the guest/match changes that move them.
  guest_count   integer NOT NULL DEFAULT 0,
  match_count   integer NOT NULL DEFAULT 0,
  success_count integer NOT NULL DEFAULT 0,
  credit_score  integer NOT NULL DEFAULT 100,
  level         text NOT NULL DEFAULT 'normal' CHECK (level IN ('normal', 'silver', 'gold')),
  cert_level    text NOT NULL DEFAULT 'none' CHECK (cert_level IN ('none', 'junior', 'intermediate', 'senior')),
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX matchmakers_company_idx ON matchmakers (company_id, id DESC);
CREATE INDEX matchmakers_status_idx ON matchmakers (status, id DESC);
CREATE INDEX matchmakers_level_idx ON matchmakers (level, id DESC);
CREATE INDEX matchmakers_has_guests_idx ON matchmakers (id DESC) WHERE guest_count > 0;
CREATE INDEX matchmakers_wechat_id_idx ON matchmakers (id DESC) WHERE wechat_id IS NOT NULL AND wechat_id <> '';
CREATE INDEX matchmakers_name_trgm_idx ON matchmakers USING gin (lower(name) gin_trgm_ops);
CREATE INDEX matchmakers_phone_trgm_idx ON matchmakers USING gin (phone gin_trgm_ops);
CREATE INDEX matchmakers_wechat_trgm_idx ON matchmakers USING gin (lower(wechat) gin_trgm_ops);

-- Events outbox: written in the transaction of the change that caused the event; the webhook
-- dispatcher reads it.
CREATE TABLE events (
  id          bigserial PRIMARY KEY,
  event_id    text NOT NULL UNIQUE,
  type        text NOT NULL,
  permission  text NOT NULL,
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_created_idx ON events (id);

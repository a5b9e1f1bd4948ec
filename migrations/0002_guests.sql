-- Guests (SPEC §2.2) with the derived matching fields of DECISIONS §6 and the indexes behind
-- every list filter and ordering of GET /guests.

-- All one- and two-character substrings of the searchable text: trigram indexes cannot serve
-- keywords shorter than three characters (two-character Chinese names are common).
CREATE FUNCTION mm_short_grams(t text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(DISTINCT g), '{}')
  FROM (
    SELECT substr(t, i, 1) AS g FROM generate_series(1, char_length(t)) AS i
    UNION
    SELECT substr(t, i, 2) FROM generate_series(1, char_length(t) - 1) AS i
  ) s
$$;

CREATE TABLE guests (
  id                     bigserial PRIMARY KEY,
  name                   text NOT NULL,
  gender                 text NOT NULL CHECK (gender IN ('male', 'female')),
  age                    integer,
  phone                  text,
  wechat                 text,
  workplace              text,
  height                 integer,
  weight                 integer,
  education              text,
  occupation             text,
  income_level           text,
  income_amount          bigint,
  family_income_amount   bigint,
  family_income_level    text,
  family_income_explicit boolean NOT NULL DEFAULT false,
  marital_status         text,
  has_children           text,
  has_house              text,
  has_car                text,
  self_intro             text,
  requirement            text,
  requirement_tags       jsonb,
  req_age_min            integer,
  req_age_max            integer,
  req_height_min         integer,
  req_education_min      integer,
  req_weight_min         integer,
  req_weight_max         integer,
  req_income_amount      bigint,
  req_income_text        text,
  req_location           text,
  req_location_codes     text[] NOT NULL DEFAULT '{}',
  req_housing            text,
  req_health             text,
  native_place           text,
  native_place_code      text,
  photos                 text[] NOT NULL DEFAULT '{}',
  photo_time             timestamptz NOT NULL DEFAULT now(),
  birth_date             date,
  personality            text,
  source_id              text,
  source                 text,
  matchmaker_id          bigint REFERENCES matchmakers (id),
  company_id             bigint NOT NULL REFERENCES companies (id),
  ethnicity              text,
  hobbies                text,
  family_members         text,
  health_status          text,
  dating_description     text,
  accept_flash_marriage  text,
  completeness           numeric(3, 2) NOT NULL DEFAULT 0,
  status                 text NOT NULL DEFAULT 'incomplete'
                           CHECK (status IN ('incomplete', 'available', 'matching', 'matched', 'archived')),
  search_grams           text[] GENERATED ALWAYS AS (mm_short_grams(lower(name)) || mm_short_grams(coalesce(phone, ''))) STORED,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);

-- Orderings (both directions read the same index) and each filter with each ordering.
CREATE INDEX guests_created_idx ON guests (created_at, id);
CREATE INDEX guests_updated_idx ON guests (updated_at, id);
CREATE INDEX guests_company_created_idx ON guests (company_id, created_at, id);
CREATE INDEX guests_company_updated_idx ON guests (company_id, updated_at, id);
CREATE INDEX guests_status_created_idx ON guests (status, created_at, id);
CREATE INDEX guests_status_updated_idx ON guests (status, updated_at, id);
CREATE INDEX guests_gender_created_idx ON guests (gender, created_at, id);
CREATE INDEX guests_gender_updated_idx ON guests (gender, updated_at, id);
CREATE INDEX guests_workplace_created_idx ON guests (workplace, created_at, id);
CREATE INDEX guests_workplace_updated_idx ON guests (workplace, updated_at, id);
CREATE INDEX guests_matchmaker_idx ON guests (matchmaker_id) WHERE matchmaker_id IS NOT NULL;
-- keyword: trigrams for three characters and more, short grams below that.
CREATE INDEX guests_name_trgm_idx ON guests USING gin (lower(name) gin_trgm_ops);
CREATE INDEX guests_phone_trgm_idx ON guests USING gin (phone gin_trgm_ops);
CREATE INDEX guests_short_grams_idx ON guests USING gin (search_grams);

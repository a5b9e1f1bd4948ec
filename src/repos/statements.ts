// SQL text shared by a repository and the request-path benchmark's floors (which issue exactly
// this text): plain strings only.

/** The columns of a guest list row (GuestsRepo). */
export const GUEST_LIST_COLUMNS = `id::int AS id, name, gender, age, phone, workplace, height, weight, education, occupation,
  income_level, income_amount::float8 AS income_amount, family_income_amount::float8 AS family_income_amount,
  family_income_level, req_income_amount::float8 AS req_income_amount, req_income_text, marital_status,
  requirement, requirement_tags, photos, photo_time, company_id::int AS company_id, status, created_at, updated_at`

/** The columns of a matchmaker (MatchmakersRepo). */
export const MATCHMAKER_COLUMNS = `id::int AS id, company_id::int AS company_id, store_id::int AS store_id, name, phone, wechat,
  wechat_id, country, province, city, avatar, years_exp, specialty, intro, guest_count, match_count,
  CASE WHEN match_count = 0 THEN 0 ELSE round(success_count::numeric / match_count, 4)::float8 END AS success_rate,
  credit_score, level, cert_level, status, created_at, updated_at`

/** The columns of a company (CompaniesRepo). */
export const COMPANY_COLUMNS = `id::int AS id, name, contact_name, contact_phone, province, city, district, address,
  credit_code, logo_url, company_type, cert_level, status, created_at, updated_at`

/**
 * Admits a signed request in one statement (ReplayRepo.admit): records its nonce (fresh unless seen
 * since `$4` not_before_ms) and, when `$6` want > 0 and the nonce is fresh, leases up to `want`
 * tokens from the client's shared bucket (refilled at `$7` rps up to `$8` burst, created full). A
 * request signed (`$5`, Unix seconds) before the nonce record was last emptied is not admitted.
 * Parameters: $1 app_key, $2 nonce, $3 now_ms, $4 not_before_ms, $5 signed_s, $6 want, $7 rps, $8 burst.
 */
export const ADMIT_SQL = `WITH ep AS (SELECT since_s FROM nonce_epoch WHERE id = 1),
n AS (
  INSERT INTO request_nonces (app_key, nonce, seen_ms)
  SELECT $1::text, $2::text, $3::bigint FROM ep WHERE ep.since_s <= $5::bigint
  ON CONFLICT (app_key, nonce) DO UPDATE SET seen_ms = EXCLUDED.seen_ms WHERE request_nonces.seen_ms < $4::bigint
  RETURNING 1),
b AS (
  INSERT INTO rate_buckets AS b (app_key, tokens, updated_ms, granted)
  SELECT $1::text, $8::float8 - LEAST($6::float8, $8::float8), $3::bigint, LEAST($6::float8, $8::float8)
  WHERE $6::float8 > 0 AND EXISTS (SELECT 1 FROM n)
  ON CONFLICT (app_key) DO UPDATE SET
    granted = LEAST(EXCLUDED.granted, floor(bucket_refill(b.tokens, b.updated_ms, $3::bigint, $7::float8, $8::float8))),
    tokens = bucket_refill(b.tokens, b.updated_ms, $3::bigint, $7::float8, $8::float8)
      - LEAST(EXCLUDED.granted, floor(bucket_refill(b.tokens, b.updated_ms, $3::bigint, $7::float8, $8::float8))),
    updated_ms = GREATEST(b.updated_ms, $3::bigint)
  RETURNING b.granted, b.tokens)
SELECT (SELECT since_s FROM ep)::float8 AS epoch_s, EXISTS (SELECT 1 FROM n) AS fresh,
  (SELECT granted FROM b) AS granted, (SELECT tokens FROM b) AS tokens`

/**
 * Inserts events of one type in one statement (OutboxRepo.insertMany), in the order given, each
 * `tx_id` its transaction's xid raised to the latest `tx_id` among the same record's events of
 * younger transactions (OutboxRepo says why). Call it inside the transaction of the change.
 * Parameters: $1 type, $2 permission, $3 event_ids (text[]), $4 data (text[], JSON objects).
 */
export const EVENTS_INSERT_SQL = `INSERT INTO events (event_id, type, permission, data, tx_id)
SELECT v.event_id, $1::text, $2::text, v.data::jsonb, GREATEST(pg_current_xact_id(), (
  SELECT e.tx_id FROM events e
  WHERE e.tx_id > pg_current_xact_id()
    AND split_part(e.type, '.', 1) = split_part($1::text, '.', 1)
    AND e.data->'id' = v.data::jsonb->'id'
  ORDER BY e.tx_id DESC LIMIT 1))
FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS v(event_id, data, n)
ORDER BY v.n`

// SQL text shared by a repository and the request-path benchmark's floors (which issue exactly
// this text): plain strings only.
import { EVENT_READ_PERMISSION } from "../domain/eventTypes.js"
import { NONCE_SLOT_MS, nonceSlots } from "../domain/nonces.js"

/** The columns of a guest list row (GuestsRepo). */
export const GUEST_LIST_COLUMNS = `id::int AS id, name, gender, age, phone, workplace, height, weight, education, occupation,
  income_level, income_amount::float8 AS income_amount, family_income_amount::float8 AS family_income_amount,
  family_income_level, req_income_amount::float8 AS req_income_amount, req_income_text, marital_status,
  requirement, requirement_tags, photos, photo_time, company_id::int AS company_id, status, created_at, updated_at`

/** Every column of a guest (GuestsRepo's GuestRow, and so of its state), with the casts the row schema expects. */
export const GUEST_COLUMNS = `id::int AS id, name, gender, age, phone, wechat, workplace, height, weight, education, occupation,
  income_level, income_amount::float8 AS income_amount, family_income_amount::float8 AS family_income_amount,
  family_income_level, family_income_explicit, marital_status, has_children, has_house, has_car, self_intro,
  requirement, requirement_tags, req_age_min, req_age_max, req_height_min, req_education_min, req_weight_min,
  req_weight_max, req_income_amount::float8 AS req_income_amount, req_income_text, req_location, req_location_codes,
  req_housing, req_health, native_place, native_place_code, photos, photo_time, birth_date::text AS birth_date,
  personality, source_id, source, matchmaker_id::int AS matchmaker_id, company_id::int AS company_id, ethnicity,
  hobbies, family_members, health_status, dating_description, accept_flash_marriage, status,
  completeness::float8 AS completeness, created_at, updated_at`

/** The columns of a matchmaker (MatchmakersRepo). */
export const MATCHMAKER_COLUMNS = `id::int AS id, company_id::int AS company_id, store_id::int AS store_id, name, phone, wechat,
  wechat_id, country, province, city, avatar, years_exp, specialty, intro, guest_count, match_count,
  CASE WHEN match_count = 0 THEN 0 ELSE round(success_count::numeric / match_count, 4)::float8 END AS success_rate,
  credit_score, level, cert_level, status, created_at, updated_at`

/** The columns of a company (CompaniesRepo). */
export const COMPANY_COLUMNS = `id::int AS id, name, contact_name, contact_phone, province, city, district, address,
  credit_code, logo_url, company_type, cert_level, status, created_at, updated_at`

/** The hour slot of now (epoch ms of its start): the first a nonce is recorded in (migration 0025, nonceSlots). */
const FIRST_SLOT = `$3::bigint / ${NONCE_SLOT_MS} * ${NONCE_SLOT_MS}`

/** An admission statement around `n`, the CTE recording the nonce, fresh when `fresh` holds of it. */
const admitStatement = (n: string, fresh: string) =>
  `WITH ep AS (SELECT since_s FROM nonce_epoch WHERE id = 1),
n AS (${n}),
b AS (
  INSERT INTO rate_buckets AS b (app_key, tokens, updated_ms, granted)
  SELECT $1::text, $8::float8 - LEAST($6::float8, $8::float8), $3::bigint, LEAST($6::float8, $8::float8)
  WHERE $6::float8 > 0 AND ${fresh}
  ON CONFLICT (app_key) DO UPDATE SET
    granted = LEAST(EXCLUDED.granted, floor(bucket_refill(b.tokens, b.updated_ms, $3::bigint, $7::float8, $8::float8))),
    tokens = bucket_refill(b.tokens, b.updated_ms, $3::bigint, $7::float8, $8::float8)
      - LEAST(EXCLUDED.granted, floor(bucket_refill(b.tokens, b.updated_ms, $3::bigint, $7::float8, $8::float8))),
    updated_ms = GREATEST(b.updated_ms, $3::bigint)
  RETURNING b.granted, b.tokens)
SELECT (SELECT since_s FROM ep)::float8 AS epoch_s, ${fresh} AS fresh,
  (SELECT granted FROM b) AS granted, (SELECT tokens FROM b) AS tokens`

const ON_CONFLICT =
  `ON CONFLICT (app_key, nonce, slot_ms) DO UPDATE SET seen_ms = EXCLUDED.seen_ms WHERE request_nonces.seen_ms < $4::bigint`

/** admitSql's statement when now + retention is within now's hour: the nonce in that hour's slot alone. */
export const ADMIT_ONE_SLOT_SQL = admitStatement(
  `INSERT INTO request_nonces (app_key, nonce, seen_ms, slot_ms)
  SELECT $1::text, $2::text, $3::bigint, ${FIRST_SLOT} FROM ep WHERE ep.since_s <= $5::bigint
  ${ON_CONFLICT}
  RETURNING 1`,
  "EXISTS (SELECT 1 FROM n)"
)

/**
 * admitSql's statement when now + retention reaches the next hour: the nonce in both hours' slots,
 * in ascending order (two sightings racing do not deadlock), fresh when both took it. A sighting
 * already recorded in either refuses the request before anything is written, so a refused replay
 * leaves no row in the other (only a sighting racing it can; that makes the nonce's refusal last
 * longer, never shorter).
 */
export const ADMIT_TWO_SLOTS_SQL = admitStatement(
  `INSERT INTO request_nonces (app_key, nonce, seen_ms, slot_ms)
  SELECT $1::text, $2::text, $3::bigint, s.slot_ms
  FROM ep, (VALUES (${FIRST_SLOT}), (${FIRST_SLOT} + ${NONCE_SLOT_MS})) AS s(slot_ms)
  WHERE ep.since_s <= $5::bigint AND NOT EXISTS (SELECT 1 FROM request_nonces r
    WHERE r.app_key = $1::text AND r.nonce = $2::text AND r.seen_ms >= $4::bigint
      AND r.slot_ms IN (${FIRST_SLOT}, ${FIRST_SLOT} + ${NONCE_SLOT_MS}))
  ORDER BY s.slot_ms
  ${ON_CONFLICT}
  RETURNING 1`,
  "(SELECT count(*) FROM n) = 2"
)

/**
 * The statement that admits a signed request (ReplayRepo.admit) seen at `nowMs` with a retention
 * back to `notBeforeMs`: records its nonce (fresh unless seen since `$4` not_before_ms) and, when
 * `$6` want > 0 and the nonce is fresh, leases up to `want` tokens from the client's shared bucket
 * (refilled at `$7` rps up to `$8` burst, created full). A request signed (`$5`, Unix seconds)
 * before the nonce record was last emptied is not admitted. Parameters: $1 app_key, $2 nonce,
 * $3 now_ms, $4 not_before_ms, $5 signed_s, $6 want, $7 rps, $8 burst.
 *
 * The nonce is recorded in every hour slot that [now, now + retention] touches (nonceSlots; a
 * retention past an hour counts as an hour), migration 0025: a later sighting within the retention
 * falls in one of those slots and meets this one on that slot's unique index, whichever partition
 * holds it and however the two race. Most sightings need one slot (ADMIT_ONE_SLOT_SQL, the former
 * statement's cost); those within the retention of the next hour two (ADMIT_TWO_SLOTS_SQL).
 */
export const admitSql = (nowMs: number, notBeforeMs: number): string =>
  nonceSlots(nowMs, nowMs - notBeforeMs).length === 1 ? ADMIT_ONE_SLOT_SQL : ADMIT_TWO_SLOTS_SQL

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

/** A text value as an SQL string literal (for constants of the code and settings, never a client's input). */
export const sqlTextLiteral = (text: string): string => `'${text.replaceAll("'", "''")}'`

/**
 * The record of a row of `alias` (a CTE whose columns are a read endpoint's columns, as a
 * repository's RETURNING selects them) as JSON, the way the endpoint shows it: its columns, but
 * the instants `times` as `YYYY-MM-DD HH:MM:SS` in the platform time zone `timeZone` (as
 * domain/time.ts formats them), without the columns `drop`, with `extra` (SQL text, a jsonb
 * object) merged in.
 */
export const recordJsonSql = (
  alias: string,
  o: { readonly timeZone: string; readonly times: ReadonlyArray<string>; readonly drop?: ReadonlyArray<string>; readonly extra?: string }
): string =>
  `(to_jsonb(${alias})${(o.drop ?? []).map((c) => ` - '${c}'`).join("")} || jsonb_build_object(${
    o.times.map((t) => `'${t}', to_char(${alias}.${t} AT TIME ZONE ${sqlTextLiteral(o.timeZone)}, 'YYYY-MM-DD HH24:MI:SS')`).join(", ")
  })${o.extra === undefined ? "" : ` || ${o.extra}`})`

/**
 * The event rows of a write recorded by the write's own statement (issue 37: the change and its
 * events as one data-modifying CTE, `WITH c AS (INSERT … RETURNING …), e AS (<this>) SELECT …`):
 * one `type` event per row of the CTE `source`, `data` the SQL expression of its payload (see
 * recordJsonSql), in the order of `orderBy`. The event id is `evt_` and 12 random bytes (the
 * random bytes of two v4 UUIDs), as newEventId makes them; `tx_id` follows EVENTS_INSERT_SQL's rule
 * through event_tx_id (migration 0023), which reads the record's other events in a snapshot of
 * its own, taken once the change holds the record's row lock.
 */
export const eventsFromSql = (
  o: { readonly source: string; readonly type: string; readonly permission: string; readonly data: string; readonly orderBy?: string }
): string =>
  `INSERT INTO events (event_id, type, permission, data, tx_id)
SELECT v.event_id, v.type, v.permission, v.data, event_tx_id(v.type, v.data->'id') FROM (
  SELECT 'evt_' || encode(substr(uuid_send(gen_random_uuid()), 1, 6) || substr(uuid_send(gen_random_uuid()), 11, 6), 'hex') AS event_id,
    ${sqlTextLiteral(o.type)}::text AS type, ${sqlTextLiteral(o.permission)}::text AS permission, ${o.data} AS data
  FROM ${o.source}${o.orderBy === undefined ? "" : ` ORDER BY ${o.orderBy}`}) v`

/** recordJsonSql's `extra` for a `*.updated` event: its `changed_fields` (names of the contract's fields). */
export const changedFieldsSql = (fields: ReadonlyArray<string>): string =>
  `jsonb_build_object('changed_fields', ${sqlTextLiteral(JSON.stringify(fields))}::jsonb)`

/** The event of each row a recorded write changed: its type and read permission, and its payload (recordJsonSql). */
export interface RecordedEvent {
  readonly type: string
  readonly permission: string
  readonly timeZone: string
  readonly times: ReadonlyArray<string>
  readonly drop?: ReadonlyArray<string>
  readonly extra?: string
}

/** The events CTE of a recorded write whose change is the CTE `c` (sqlHelpers' recordedWrite). */
export const recordedEventsSql = (event: RecordedEvent): string =>
  eventsFromSql({ source: "c", type: event.type, permission: event.permission, data: recordJsonSql("c", event) })

/** recordedWrite as text (the benchmark floors'): `change` (an INSERT or UPDATE … RETURNING), its events, its rows. */
export const recordedWriteSql = (change: string, event: RecordedEvent): string =>
  `WITH c AS (${change}), e AS (${recordedEventsSql(event)}) SELECT * FROM c`

/**
 * POST /guests after its `WITH c AS (INSERT INTO guests … RETURNING GUEST_COLUMNS)` (GuestsRepo's
 * and the floors'), one statement in all (issue 37): the guest's guest.created event (the record
 * as GET /guests/{id} shows it, guest_id beside it), its matchmaker's guest_count and that
 * matchmaker's matchmaker.updated event; the row_counts move in it too, by their triggers. The
 * matchmaker row is locked by its UPDATE, after the guest's foreign key took KEY SHARE on it (NO
 * KEY UPDATE does not conflict with that), so creations under one matchmaker queue on its row
 * and never deadlock on it. Its rows are the guest's; guest.created comes first in the feed.
 */
export const guestCreatedTailSql = (timeZone: string): string =>
  `, e AS (${
    recordedEventsSql({
      type: "guest.created",
      permission: EVENT_READ_PERMISSION.guest,
      timeZone,
      times: ["photo_time", "created_at", "updated_at"],
      drop: ["family_income_explicit"],
      extra: "jsonb_build_object('guest_id', c.id)"
    })
  } RETURNING id),
m AS (UPDATE matchmakers SET guest_count = guest_count + 1 WHERE id = (SELECT matchmaker_id FROM c) RETURNING ${MATCHMAKER_COLUMNS}),
em AS (${
    eventsFromSql({
      // Sibling data-modifying CTEs run in no stated order: reading e first (an InitPlan, run once
      // before m's row is used) makes guest.created take its id before matchmaker.updated, the
      // order the transaction recorded them in before (the feed lists a transaction's events by id).
      source: "m WHERE (SELECT count(*) FROM e) > 0",
      type: "matchmaker.updated",
      permission: EVENT_READ_PERMISSION.matchmaker,
      data: recordJsonSql("m", { timeZone, times: ["created_at", "updated_at"], extra: changedFieldsSql(["guest_count"]) })
    })
  })
SELECT * FROM c`

/** The instants of a guest's record, written as its read endpoint writes them. */
const GUEST_RECORD_TIMES = ["photo_time", "created_at", "updated_at"]

/**
 * The columns of a guest read to be updated (GuestsRepo's and the floors'): GUEST_COLUMNS and the
 * row version the update is made against (`xmin`, the transaction that wrote this version of the
 * row: any later write of the row, whatever it changed, makes a new version with another). The
 * update's `WHERE id = … AND xmin = <version>::xid` waits for a concurrent writer of the row and
 * then re-checks that condition on the row the writer left (READ COMMITTED's re-check): it changes
 * the row only while it is still the version its new state was derived from.
 */
export const GUEST_VERSIONED_COLUMNS = `${GUEST_COLUMNS}, xmin::text AS row_version`

/**
 * Where a parameter goes in SQL text shared by a repository and the benchmark floors: the
 * repository puts its values there (sqlHelpers' slotted), a floor numbers them (numberedSlots).
 * A statement whose values are parameters keeps one text, so the pool prepares it once.
 */
export const SLOT = "\u0001"

/** The text with its slots numbered `$first`, `$first + 1`, … (a floor's statement). */
export const numberedSlots = (text: string, first: number): string => {
  let n = first
  return text.replaceAll(SLOT, () => `$${n++}`)
}

/** One move of a matchmaker's guest_count: its id and the delta. */
export type CounterMove = readonly [matchmakerId: number, delta: number]

/** The values of guestUpdatedTailSql's slots: the fields sent (JSON text) and the counter moves, in matchmaker id order. */
export const guestUpdatedTailValues = (
  changed: ReadonlyArray<string>,
  moves: ReadonlyArray<CounterMove>
): readonly [string, ReadonlyArray<number>, ReadonlyArray<number>] => {
  const sorted = [...moves].sort(([a], [b]) => a - b)
  return [JSON.stringify(changed), sorted.map(([id]) => id), sorted.map(([, delta]) => delta)]
}

/**
 * The CTEs `d`, `m1`, `m2`, `em` of a recorded write that moves the counters of at most two
 * matchmakers (issue 37): `moved` selects them, `mid` (and whatever `set` reads of `d`), and must
 * read the change's CTE so that nothing moves unless the change was made. Each is updated by `set`
 * in a single-row UPDATE of its own, the lower id first (`m2` reads `m1` first): every writer of
 * matchmakers takes their rows in id order, after the record's own row, so two writes moving the
 * same counters queue and never deadlock. The UPDATEs lock the rows themselves: a `SELECT … FOR
 * NO KEY UPDATE` before them in the same statement would lock the rows' latest versions, and the
 * UPDATEs, reading the statement's older snapshot, would then queue behind another locker waiting
 * for this statement (a deadlock PostgreSQL detects, seen under concurrent match moves). One
 * matchmaker.updated event per row (`changed`: its changed_fields), in id order, after the events
 * of the CTE `after` (read first: sibling data-modifying CTEs run in no stated order, and the feed
 * lists a transaction's events by id).
 */
const matchmakerCountersSql = (
  o: {
    readonly timeZone: string
    readonly moved: string
    readonly set: string
    readonly changed: ReadonlyArray<string>
    readonly after: string
  }
): string =>
  `d AS (${o.moved}),
m1 AS (UPDATE matchmakers SET ${o.set} WHERE id = (SELECT min(d.mid) FROM d) RETURNING ${MATCHMAKER_COLUMNS}),
m2 AS (UPDATE matchmakers SET ${o.set} WHERE id = (SELECT max(d.mid) FROM d)
  AND (SELECT count(*) FROM m1) > 0 AND (SELECT count(DISTINCT d.mid) FROM d) = 2 RETURNING ${MATCHMAKER_COLUMNS}),
em AS (${
    eventsFromSql({
      source: `(SELECT * FROM m1 UNION ALL SELECT * FROM m2) m WHERE (SELECT count(*) FROM ${o.after}) > 0`,
      type: "matchmaker.updated",
      permission: EVENT_READ_PERMISSION.matchmaker,
      data: recordJsonSql("m", { timeZone: o.timeZone, times: ["created_at", "updated_at"], extra: changedFieldsSql(o.changed) }),
      orderBy: "m.id"
    })
  })`

/**
 * PUT /guests/{id} after its `WITH c AS (UPDATE guests … RETURNING GUEST_COLUMNS)` (GuestsRepo's
 * and the floors'), one statement in all (issue 37): the guest's guest.updated event (the record
 * as GET /guests/{id} shows it, guest_id and changed_fields beside it), then, when the guest moved
 * between matchmakers, each moved matchmaker's guest_count and its matchmaker.updated event, in
 * matchmaker id order, as the transaction recorded them (guest.updated first). Slots
 * (guestUpdatedTailValues): the fields sent, as a JSON array; the moved matchmakers' ids and
 * their deltas (none zero; both empty when the guest kept its matchmaker). Nothing moves unless
 * the guest's UPDATE changed its row: the counters' CTE reads `c` first. The matchmaker rows are
 * updated in id order after the guest's row (matchmakerCountersSql), as every writer of both
 * tables takes them (guests, then matchmakers, each in id order), so two moves in opposite
 * directions queue and never deadlock. Its rows are the guest's.
 */
export const guestUpdatedTailSql = (timeZone: string): string =>
  `, e AS (${
    recordedEventsSql({
      type: "guest.updated",
      permission: EVENT_READ_PERMISSION.guest,
      timeZone,
      times: GUEST_RECORD_TIMES,
      drop: ["family_income_explicit"],
      extra: `jsonb_build_object('guest_id', c.id, 'changed_fields', ${SLOT}::jsonb)`
    })
  } RETURNING id),
${
    matchmakerCountersSql({
      timeZone,
      moved: `SELECT * FROM unnest(${SLOT}::bigint[], ${SLOT}::int[]) AS d (mid, delta) WHERE EXISTS (SELECT 1 FROM c)`,
      set: "guest_count = guest_count + (SELECT d.delta FROM d WHERE d.mid = matchmakers.id)",
      changed: ["guest_count"],
      after: "e"
    })
  }
SELECT * FROM c`

/**
 * POST /matches after its `WITH c AS (INSERT INTO matches … RETURNING <the match's columns>)`
 * (MatchesRepo's), one statement in all (issue 37): the match's match.created event (the record as
 * the list shows it, match_id beside it), then each counted matchmaker's match_count (both sides'
 * matchmakers, each once) and its matchmaker.updated event (changed_fields match_count and
 * success_rate), in matchmaker id order, after the match's event, as the transaction recorded them.
 * The insert's foreign keys take KEY SHARE on the matchmakers, which their NO KEY UPDATE does not
 * wait for; the counters are updated one row at a time in id order (matchmakerCountersSql), as
 * every writer of them does. Its rows are the match's.
 */
export const matchCreatedTailSql = (timeZone: string): string =>
  `, e AS (${
    recordedEventsSql({
      type: "match.created",
      permission: EVENT_READ_PERMISSION.match,
      timeZone,
      times: ["created_at", "updated_at"],
      extra: "jsonb_build_object('match_id', c.id)"
    })
  } RETURNING id),
${
    matchmakerCountersSql({
      timeZone,
      moved: `SELECT DISTINCT u.mid FROM c, unnest(ARRAY[c.guest_a_matchmaker_id, c.guest_b_matchmaker_id]) AS u (mid)
  WHERE u.mid IS NOT NULL`,
      set: "match_count = match_count + 1",
      changed: ["match_count", "success_rate"],
      after: "e"
    })
  }
SELECT * FROM c`

/**
 * PUT /matches/{id}/status after its `WITH c AS (UPDATE matches … RETURNING <the match's columns>)`
 * (MatchesRepo's), one statement in all (issue 37): the match's match.status_changed event (the
 * record as the list shows it, match_id and previous_status beside it: the one slot, the status
 * the match left), then, when the match became completed, each counted matchmaker's success_count
 * (both sides' matchmakers, each once) and its matchmaker.updated event (changed_fields
 * success_rate), in matchmaker id order, after the match's event, as the transaction recorded
 * them. Its rows are the match's.
 */
export const matchStatusChangedTailSql = (timeZone: string): string =>
  `, e AS (${
    recordedEventsSql({
      type: "match.status_changed",
      permission: EVENT_READ_PERMISSION.match,
      timeZone,
      times: ["created_at", "updated_at"],
      extra: `jsonb_build_object('match_id', c.id, 'previous_status', ${SLOT}::text)`
    })
  } RETURNING id),
${
    matchmakerCountersSql({
      timeZone,
      moved: `SELECT DISTINCT u.mid FROM c, unnest(ARRAY[c.guest_a_matchmaker_id, c.guest_b_matchmaker_id]) AS u (mid)
  WHERE u.mid IS NOT NULL AND c.status = 'completed'`,
      set: "success_count = success_count + 1",
      changed: ["success_rate"],
      after: "e"
    })
  }
SELECT * FROM c`

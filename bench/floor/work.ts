// The work per request that the request-path benchmark's floors share, as plain functions: the
// raw floor (bench/floor/server.ts: node:http + pg), the Effect floor (bench/effect-floor: Effect's
// HttpApi + PgClient) and the Fastify floor (bench/fastify-floor: Fastify + pg) each do their I/O
// their own way and call these for the rest, so that they differ only in the framework and the
// driver. The signing checks (DECISIONS §2) and the admission (§10) in the order of the service's
// Authenticator; the client row's secret opened once with AES-GCM; the endpoints' SQL text (the
// repositories' column lists, and a new company's `company.created` event recorded by the insert's
// own statement, as the service records it, DECISIONS §12); the envelope and the rate-limit headers; one JSON log line per
// request gathered per turn and written asynchronously, as the service writes its lines. No
// framework, no driver, no Effect here.
import { createDecipheriv, createHash, createHmac, timingSafeEqual } from "node:crypto"
import fs from "node:fs"

// Pure modules only: the lease rule, the canonical string, time formatting, SQL text.
import { EVENT_READ_PERMISSION } from "../../src/domain/eventTypes.js"
import { deriveGuest, type GuestSent, type GuestState } from "../../src/domain/guest.js"
import { leaseSize, LocalTokens } from "../../src/domain/rateLease.js"
import { canonicalString, NONCE_PATTERN } from "../../src/domain/signing.js"
import { formatTimestamp, parseTimestamp } from "../../src/domain/time.js"
import {
  admitSql,
  COMPANY_COLUMNS,
  type CounterMove,
  GUEST_COLUMNS,
  GUEST_LIST_COLUMNS,
  GUEST_VERSIONED_COLUMNS,
  guestCreatedTailSql,
  guestUpdatedTailSql,
  guestUpdatedTailValues,
  MATCHMAKER_COLUMNS,
  numberedSlots,
  type RecordedEvent,
  recordedEventsSql,
  recordedWriteSql
} from "../../src/repos/statements.js"

export const TZ = process.env.TZ_PLATFORM ?? "Asia/Shanghai"
export const ROW_TIMES = ["created_at", "updated_at"] as const
export const GUEST_TIMES = ["photo_time", "created_at", "updated_at"] as const
const WINDOW_S = 300
const RETENTION_MS = 900_000
/** The service's defaults for a client without its own rate. */
const DEFAULT_RPS = 50
const DEFAULT_BURST = 100

// ---- SQL ----------------------------------------------------------------------------------------

export const CLIENT_SQL = "SELECT app_key, status, permissions, secret_enc, rate_rps, rate_burst FROM clients WHERE app_key = $1"
export const MATCHMAKER_SQL = `SELECT ${MATCHMAKER_COLUMNS} FROM matchmakers WHERE id = $1`
/**
 * A new company's `company.created` event as the service records it (its read permission, the
 * record as the answer shows it), in the statement of the insert.
 */
export const COMPANY_CREATED: RecordedEvent = {
  type: "company.created",
  permission: EVENT_READ_PERMISSION.company,
  timeZone: TZ,
  times: ROW_TIMES
}
/** The events CTE of a new company (COMPANY_CREATED), for a floor that writes the insert its own way. */
export const COMPANY_CREATED_EVENTS_SQL = recordedEventsSql(COMPANY_CREATED)
/**
 * A company from the fields sent (their names are the payload's keys, checked by the caller) and
 * its `company.created` event, in one statement (one data-modifying CTE), as the service writes it.
 */
export const companyInsertSql = (keys: ReadonlyArray<string>): string =>
  recordedWriteSql(
    `INSERT INTO companies (${keys.map((k) => `"${k}"`).join(", ")}) VALUES (${keys.map((_, i) => `$${i + 1}`).join(", ")}) ` +
      `RETURNING ${COMPANY_COLUMNS}`,
    COMPANY_CREATED
  )
/** The references of a new guest, read as the service reads them (both at once: they do not depend on each other). */
export const COMPANY_EXISTS_SQL = "SELECT id::int AS id FROM companies WHERE id IN ($1)"
export const MATCHMAKER_EXISTS_SQL = "SELECT id::int AS id FROM matchmakers WHERE id IN ($1)"

/** The fields of POST /guests a floor takes (what the benchmark sends): the required three and a matchmaker. */
export interface FloorGuestInput {
  readonly name: string
  readonly gender: "male" | "female"
  readonly company_id: number
  readonly matchmaker_id?: number | null
}

/** The guest fields of a JSON body the floors take; undefined when it is not one. */
export const guestInput = (input: unknown): FloorGuestInput | undefined => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined
  const f = input as Record<string, unknown>
  const known = Object.keys(f).every((k) => ["name", "gender", "company_id", "matchmaker_id"].includes(k))
  return known && typeof f.name === "string" && f.name.trim() !== "" && (f.gender === "male" || f.gender === "female") &&
      Number.isSafeInteger(f.company_id) && (f.matchmaker_id == null || Number.isSafeInteger(f.matchmaker_id))
    ? f as unknown as FloorGuestInput
    : undefined
}

/**
 * POST /guests' statement and its parameters, as the service writes it: the guest's derived state
 * (the domain's pure rule) as columns, the guest, its event, its matchmaker's counter and that
 * event in one statement (guestCreatedTailSql).
 */
export const guestInsert = (input: FloorGuestInput): { readonly text: string; readonly values: ReadonlyArray<unknown> } => {
  const { photo_time, requirement_tags, ...state } = deriveGuest(input as GuestSent, undefined)
  const columns: Record<string, unknown> = {
    ...state,
    requirement_tags: requirement_tags === null ? null : JSON.stringify(requirement_tags),
    ...(photo_time === null ? {} : { photo_time: parseTimestamp(photo_time, TZ) })
  }
  const keys = Object.keys(columns)
  return {
    text: `WITH c AS (INSERT INTO guests (${keys.map((k) => `"${k}"`).join(", ")}) VALUES (${
      keys.map((_, i) => `$${i + 1}`).join(", ")
    }) RETURNING ${GUEST_COLUMNS})${guestCreatedTailSql(TZ)}`,
    values: keys.map((k) => columns[k])
  }
}

/** POST /guests' answer from the row the statement returned (the service's fields, in its order). */
export const guestCreated = (row: Record<string, unknown>): Record<string, unknown> => ({
  id: row.id,
  name: row.name,
  gender: row.gender,
  age: row.age,
  requirement: row.requirement,
  requirement_tags: row.requirement_tags,
  status: row.status,
  created_at: row.created_at instanceof Date ? formatTimestamp(row.created_at, TZ) : row.created_at
})

/** A guest as read to be updated (its columns and its row's version), as the service reads it; locked: in the transaction. */
export const GUEST_VERSIONED_SQL = `SELECT ${GUEST_VERSIONED_COLUMNS} FROM guests WHERE id = $1`
export const GUEST_LOCKED_SQL = `${GUEST_VERSIONED_SQL} FOR UPDATE`

/** The fields of PUT /guests/{id} a floor takes (what the benchmark sends), in the contract's order. */
export const GUEST_CHANGE_FIELDS = ["name", "matchmaker_id"] as const
export interface FloorGuestChange {
  readonly name?: string
  readonly matchmaker_id?: number | null
}

/** The guest change of a JSON body the floors take (its fields in the contract's order); undefined when it is not one. */
export const guestChange = (input: unknown): FloorGuestChange | undefined => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined
  const f = input as Record<string, unknown>
  const known = Object.keys(f).every((k) => (GUEST_CHANGE_FIELDS as ReadonlyArray<string>).includes(k))
  if (!known || (f.name !== undefined && (typeof f.name !== "string" || f.name.trim() === ""))) return undefined
  if (f.matchmaker_id !== undefined && f.matchmaker_id !== null && !Number.isSafeInteger(f.matchmaker_id)) return undefined
  return Object.fromEntries(GUEST_CHANGE_FIELDS.filter((k) => f[k] !== undefined).map((k) => [k, f[k]])) as FloorGuestChange
}

/** A guest's stored state from its row (GUEST_VERSIONED_SQL's), as the service's row decoding gives it. */
const guestStateOf = (row: Record<string, unknown>): GuestState => {
  const { created_at: _c, id: _i, row_version: _v, updated_at: _u, ...state } = row
  return { ...state, photo_time: state.photo_time instanceof Date ? formatTimestamp(state.photo_time, TZ) : state.photo_time } as GuestState
}

/** A guest's state as the columns a write stores (photo_time as an instant, left out when null; the tags as JSON text). */
const guestColumns = ({ photo_time, requirement_tags, ...state }: GuestState): Record<string, unknown> => ({
  ...state,
  requirement_tags: requirement_tags === null ? null : JSON.stringify(requirement_tags),
  ...(photo_time === null ? {} : { photo_time: parseTimestamp(photo_time, TZ) })
})

/**
 * PUT /guests/{id}'s statement and its parameters, as the service writes it: the next state derived
 * from the row read (the domain's pure rule) stored against that row's version, its event, the
 * moved matchmakers' counters and their events, in one statement (guestUpdatedTailSql).
 */
export const guestUpdate = (
  id: number,
  row: Record<string, unknown>,
  change: FloorGuestChange
): { readonly text: string; readonly values: ReadonlyArray<unknown> } => {
  const before = guestStateOf(row)
  const next = deriveGuest(change as GuestSent, before)
  const moves: Array<CounterMove> = before.matchmaker_id === next.matchmaker_id
    ? []
    : [
      ...(before.matchmaker_id === null ? [] : [[before.matchmaker_id, -1] as const]),
      ...(next.matchmaker_id === null ? [] : [[next.matchmaker_id, 1] as const])
    ]
  const columns = guestColumns(next)
  const keys = Object.keys(columns)
  return {
    text: `WITH c AS (UPDATE guests SET ${keys.map((k, i) => `"${k}" = $${i + 1}`).join(", ")}, updated_at = now() ` +
      `WHERE id = $${keys.length + 1} AND xmin = $${keys.length + 2}::xid RETURNING ${GUEST_COLUMNS})${
        numberedSlots(guestUpdatedTailSql(TZ), keys.length + 3)
      }`,
    values: [...keys.map((k) => columns[k]), id, row.row_version, ...guestUpdatedTailValues(Object.keys(change), moves)]
  }
}

/** PUT /guests/{id}'s answer from the row the statement returned: the id, updated_at, the fields sent as stored. */
export const guestUpdated = (row: Record<string, unknown>, change: FloorGuestChange): Record<string, unknown> => ({
  id: row.id,
  updated_at: row.updated_at instanceof Date ? formatTimestamp(row.updated_at, TZ) : row.updated_at,
  ...Object.fromEntries(Object.keys(change).map((k) => [k, row[k]]))
})

export const GUEST_PAGE_SQL = `SELECT ${GUEST_LIST_COLUMNS} FROM guests WHERE true ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`
export const GUEST_COUNTERS_SQL = "SELECT coalesce(sum(n), 0)::int AS n FROM row_counts WHERE tbl = $1 AND dim = $2 AND val = $3"
export const GUEST_COUNT_EVERY_ROW_SQL = "SELECT count(*)::int AS n FROM guests WHERE true"

// ---- Clients ------------------------------------------------------------------------------------

export interface ClientRow {
  readonly app_key: string
  readonly status: string
  readonly permissions: ReadonlyArray<string>
  readonly secret_enc: string
  readonly rate_rps: number | null
  readonly rate_burst: number | null
}

export interface FloorClient {
  readonly appKey: string
  readonly status: string
  readonly permissions: ReadonlySet<string>
  readonly secret: string
  readonly rps: number
  readonly burst: number
}

let masterKey: Buffer | undefined
/**
 * AES-256-GCM as the service stores secrets: `v2:<kid>:` + base64(iv | tag | ciphertext), bound
 * to `clients.secret_enc:["<app_key>"]` (src/auth/SecretBox.ts), or the first scheme's `v1:` (no
 * binding). The floor has one key: SECRET_KEY's.
 */
const openSecret = (sealed: string, appKey: string): string => {
  masterKey ??= Buffer.from(process.env.SECRET_KEY!, "hex")
  const v2 = sealed.startsWith("v2:")
  const raw = Buffer.from(v2 ? sealed.slice(sealed.indexOf(":", 3) + 1) : sealed.slice(3), "base64")
  const decipher = createDecipheriv("aes-256-gcm", masterKey, raw.subarray(0, 12))
  if (v2) decipher.setAAD(Buffer.from(`clients.secret_enc:${JSON.stringify([appKey])}`))
  decipher.setAuthTag(raw.subarray(12, 28))
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
}

/** A client row with its secret opened (once: the floors keep clients in memory, as the service's cache does). */
export const clientOf = (row: ClientRow): FloorClient => ({
  appKey: row.app_key,
  status: row.status,
  permissions: new Set(row.permissions),
  secret: openSecret(row.secret_enc, row.app_key),
  rps: row.rate_rps ?? DEFAULT_RPS,
  burst: row.rate_burst ?? DEFAULT_BURST
})

/** Client rows cached per process, as the service caches them; `query` runs CLIENT_SQL. */
export const clientLookup = (query: (appKey: string) => Promise<ReadonlyArray<ClientRow>>) => {
  const clients = new Map<string, FloorClient | null>()
  return async (appKey: string): Promise<FloorClient | null> => {
    const cached = clients.get(appKey)
    if (cached !== undefined) return cached
    const rows = await query(appKey)
    const client = rows[0] === undefined ? null : clientOf(rows[0])
    clients.set(appKey, client)
    return client
  }
}

// ---- Signing ------------------------------------------------------------------------------------

export interface Signing {
  readonly appKey: string
  readonly timestamp: string
  readonly nonce: string
  readonly signature: string
}

/** Why a request is not admitted: its status and `data.error`. */
export interface Refusal {
  readonly status: 401 | 429
  readonly error: string
}

const refuse = (error: string, status: 401 | 429 = 401): Refusal => ({ status, error })

const header = (value: string | ReadonlyArray<string> | undefined): string => (typeof value === "string" ? value : "")

/** The signing headers of a request (Node's lower-case header record). */
export const signingOf = (headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>): Signing => ({
  appKey: header(headers["x-app-key"]),
  timestamp: header(headers["x-timestamp"]),
  nonce: header(headers["x-nonce"]),
  signature: header(headers["x-signature"])
})

/** The checks before the client is looked up: every header present and well-formed. */
export const checkHeaders = (s: Signing): Refusal | undefined =>
  s.appKey === "" || s.timestamp === "" || s.nonce === "" || s.signature === "" ||
    !/^\d{1,16}$/.test(s.timestamp) || !NONCE_PATTERN.test(s.nonce)
    ? refuse("missing_credentials")
    : undefined

/** The answer to an app_key that names no client. */
export const UNKNOWN_APP_KEY: Refusal = refuse("unknown_app_key")

/** The checks once the client is known: active, within the window, the HMAC of the canonical string. */
export const checkSignature = (
  client: FloorClient,
  s: Signing,
  request: { readonly method: string; readonly path: string; readonly rawQuery: string; readonly body: Uint8Array },
  nowMs: number
): Refusal | undefined => {
  if (client.status !== "active") return refuse("app_key_disabled")
  if (Math.abs(Math.floor(nowMs / 1000) - Number(s.timestamp)) > WINDOW_S) return refuse("timestamp_out_of_window")
  const bodyMd5 = createHash("md5").update(request.body).digest("hex")
  const canonical = canonicalString({ ...request, appKey: s.appKey, timestamp: s.timestamp, nonce: s.nonce, bodyMd5 })
  const expected = Buffer.from(createHmac("sha256", client.secret).update(canonical).digest("hex"))
  const given = Buffer.from(s.signature.toLowerCase())
  return expected.length !== given.length || !timingSafeEqual(expected, given) ? refuse("invalid_signature") : undefined
}

// ---- Admission: the nonce and a rate-limit lease in one statement ---------------------------------

/** The admission statement's answer. */
export interface Admitted {
  readonly fresh: boolean
  readonly granted: number | null
  readonly tokens: number | null
}

/** The rate-limit tokens this process holds per client, and the admission statement around them. */
export class Admission {
  readonly #held = new LocalTokens()

  /** Spends a token held here if there is one; the statement (admitSql) and its parameters (no lease wanted then). */
  begin(
    client: FloorClient,
    s: Signing,
    nowMs: number
  ): { readonly local: boolean; readonly sql: string; readonly params: ReadonlyArray<string | number> } {
    const local = this.#held.take(client.appKey)
    return {
      local,
      sql: admitSql(nowMs, nowMs - RETENTION_MS),
      params: [
        client.appKey,
        s.nonce,
        nowMs,
        nowMs - RETENTION_MS,
        Number(s.timestamp),
        local ? 0 : leaseSize(client.rps, client.burst),
        client.rps,
        client.burst
      ]
    }
  }

  /** The tokens left as far as this process knows, or why the request is not admitted. */
  end(client: FloorClient, local: boolean, a: Admitted): { readonly tokens: number } | Refusal {
    if (!a.fresh) return refuse("nonce_replayed")
    const granted = a.granted ?? 0
    if (!local && granted >= 1) this.#held.keep(client.appKey, granted - 1, a.tokens ?? 0)
    if (!local && granted < 1) return refuse("rate_limited", 429)
    return { tokens: this.#held.remaining(client.appKey) }
  }
}

export const isRefusal = (x: object): x is Refusal => "error" in x

/** The rate-limit headers of an admitted request. */
export const rateHeaders = (client: FloorClient, tokens: number): Record<string, string> => ({
  "ratelimit-limit": String(client.burst),
  "ratelimit-remaining": String(Math.max(0, Math.floor(tokens))),
  "ratelimit-reset": String(Math.ceil(Math.max(0, client.burst - tokens) / client.rps)),
  "ratelimit-policy": `${client.burst};w=${Math.max(1, Math.round(client.burst / client.rps))}`
})

// ---- Answers ------------------------------------------------------------------------------------

export const ok = (data: unknown): string => JSON.stringify({ code: 200, message: "ok", data })
export const fail = (status: number, error: string, message: string): string => JSON.stringify({ code: status, message, data: { error } })

/** The row with its instants written in the platform time zone, as the service answers them. */
export const withTimes = <T extends Record<string, unknown>>(row: T, keys: ReadonlyArray<string>): T => {
  for (const k of keys) if (row[k] instanceof Date) (row as Record<string, unknown>)[k] = formatTimestamp(row[k], TZ)
  return row
}

/** The columns a company may be created with (the service's CompanyCreate). */
export const COMPANY_FIELDS = [
  "name",
  "contact_name",
  "contact_phone",
  "province",
  "city",
  "district",
  "address",
  "credit_code",
  "logo_url",
  "company_type"
] as const

/** The company fields of a JSON body: a non-empty name, nothing unknown; undefined when it is not one. */
export const companyInput = (input: unknown): Record<string, unknown> | undefined => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined
  const fields = input as Record<string, unknown>
  if (typeof fields.name !== "string" || fields.name.trim() === "") return undefined
  for (const k of Object.keys(fields)) if (!(COMPANY_FIELDS as ReadonlyArray<string>).includes(k)) return undefined
  return fields
}

// ---- The log ------------------------------------------------------------------------------------

// Text gathered for the rest of the event-loop turn and written with one asynchronous write.
const pending: Array<string> = []
let flushing = false
/** Writes `text` (whole lines) on stderr without blocking the event loop. */
export const writeStderr = (text: string): void => {
  pending.push(text)
  if (!flushing) {
    flushing = true
    setImmediate(() => {
      const chunk = pending.join("")
      pending.length = 0
      fs.write(2, chunk, () => {
        flushing = false
      })
    })
  }
}

/** One JSON log line per request, shaped like the service's. */
export const logRequest = (
  annotations: { readonly request_id: string; readonly method: string; readonly path: string; readonly status: number; readonly ms: number }
): void => writeStderr(JSON.stringify({ message: "request", logLevel: "INFO", timestamp: new Date().toISOString(), annotations }) + "\n")

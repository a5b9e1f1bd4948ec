// The Effect floor of the request-path benchmark: a minimal Effect 4 HttpApi server doing the
// service's work per request on GET /matchmakers/{id}, POST /companies, POST /guests and PUT
// /guests/{id}, written as the Effect
// documentation writes one (an HttpApi of one group, a security-free HttpApiMiddleware that
// authenticates and provides the caller, handlers over SqlClient, NodeHttpServer, PgClient), so
// that the benchmark can tell Effect's own cost from the service's. The work beside the framework
// is the other floors' (bench/floor/work.ts): the signing checks, the client row from an in-memory
// map (secret opened once with AES-GCM), the HMAC, the nonce and rate-lease statement, the
// permission, the endpoint's SQL (a new company and its `company.created` event in one
// statement, the service's data-modifying CTE, the event carrying the company as answered), the envelope (the same bytes
// as the service), the request id and rate-limit headers and one JSON log line (Effect's JSON
// logger, written as the service writes).
// It imports the project's pure helpers only, none of its layers.
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"

import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SqlClient from "effect/sql/SqlClient"

import { splitUrl } from "../../src/domain/signing.js"
import { formatTimestamp } from "../../src/domain/time.js"
import { COMPANY_COLUMNS } from "../../src/repos/statements.js"
import {
  Admission,
  type Admitted,
  checkHeaders,
  checkSignature,
  CLIENT_SQL,
  clientOf,
  type ClientRow,
  COMPANY_CREATED_EVENTS_SQL,
  COMPANY_EXISTS_SQL,
  type FloorClient,
  GUEST_LOCKED_SQL,
  GUEST_VERSIONED_SQL,
  guestCreated,
  guestInsert,
  guestUpdate,
  isRefusal,
  MATCHMAKER_EXISTS_SQL,
  MATCHMAKER_SQL,
  rateHeaders,
  type Refusal,
  signingOf,
  TZ,
  UNKNOWN_APP_KEY,
  writeStderr
} from "../floor/work.js"

// ---- The contract -------------------------------------------------------------------------------

const Text = Schema.NullOr(Schema.String)
const Count = Schema.NullOr(Schema.Number)
/** A `timestamptz` column (a Date from the driver), answered as `YYYY-MM-DD HH:MM:SS` in the platform time zone. */
const Timestamp = Schema.String.pipe(
  Schema.decodeTo(Schema.Date, {
    decode: SchemaGetter.transform((text: string) => new Date(text)),
    encode: SchemaGetter.transform((date: Date) => formatTimestamp(date, TZ))
  })
)

/** The envelope of DECISIONS §1 around `data`. */
const Envelope = <S extends Schema.Top>(data: S) => Schema.Struct({ code: Schema.Literal(200), message: Schema.Literal("ok"), data })

// The columns of MATCHMAKER_COLUMNS and COMPANY_COLUMNS, in their order.
const Matchmaker = Schema.Struct({
  id: Schema.Number,
  company_id: Count,
  store_id: Count,
  name: Schema.String,
  phone: Text,
  wechat: Text,
  wechat_id: Text,
  country: Text,
  province: Text,
  city: Text,
  avatar: Text,
  years_exp: Count,
  specialty: Text,
  intro: Text,
  guest_count: Schema.Number,
  match_count: Schema.Number,
  success_rate: Schema.Number,
  credit_score: Schema.Number,
  level: Schema.String,
  cert_level: Schema.String,
  status: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp
})

const Company = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  contact_name: Text,
  contact_phone: Text,
  province: Text,
  city: Text,
  district: Text,
  address: Text,
  credit_code: Text,
  logo_url: Text,
  company_type: Schema.String,
  cert_level: Schema.String,
  status: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp
})

const optionalText = Schema.optionalKey(Text)
const CompanyCreate = Schema.Struct({
  name: Schema.NonEmptyString,
  contact_name: optionalText,
  contact_phone: optionalText,
  province: optionalText,
  city: optionalText,
  district: optionalText,
  address: optionalText,
  credit_code: optionalText,
  logo_url: optionalText,
  company_type: Schema.optionalKey(Schema.Literals(["normal", "franchisee"]))
})

const GuestCreate = Schema.Struct({
  name: Schema.NonEmptyString,
  gender: Schema.Literals(["male", "female"]),
  company_id: Schema.Int,
  matchmaker_id: Schema.optionalKey(Schema.NullOr(Schema.Int))
})
/** POST /guests' answer (the service's fields, in its order). */
const GuestCreated = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  gender: Schema.String,
  age: Count,
  requirement: Text,
  requirement_tags: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  status: Schema.String,
  created_at: Timestamp
})

const GuestChange = Schema.Struct({
  name: Schema.optionalKey(Schema.NonEmptyString),
  matchmaker_id: Schema.optionalKey(Schema.NullOr(Schema.Int))
})
/** PUT /guests/{id}'s answer: the id, updated_at, the fields sent as stored (the service's order). */
const GuestUpdated = Schema.Struct({
  id: Schema.Number,
  updated_at: Timestamp,
  name: Schema.optionalKey(Schema.String),
  matchmaker_id: Schema.optionalKey(Count)
})

// Error answers: the envelope with `data.error`, one class per status.
const errorFields = { code: Schema.Number, message: Schema.String, data: Schema.Struct({ error: Schema.String }) }
class Unauthorized extends Schema.Error<Unauthorized>("EffectFloor/Unauthorized")(errorFields, { httpApiStatus: 401 }) {}
class Forbidden extends Schema.Error<Forbidden>("EffectFloor/Forbidden")(errorFields, { httpApiStatus: 403 }) {}
class NotFound extends Schema.Error<NotFound>("EffectFloor/NotFound")(errorFields, { httpApiStatus: 404 }) {}
class TooManyRequests extends Schema.Error<TooManyRequests>("EffectFloor/TooManyRequests")(errorFields, { httpApiStatus: 429 }) {}

const refused = ({ error, status }: Refusal) => {
  const fields = { code: status, message: error, data: { error } }
  return status === 429 ? new TooManyRequests(fields) : new Unauthorized(fields)
}

/** The authenticated client, provided to the handlers by the signature middleware. */
class Caller extends Context.Service<Caller, FloorClient>()("EffectFloor/Caller") {}

/** The permission an endpoint requires (an endpoint annotation read by the signature middleware); none: refused. */
const RequiredPermission = Context.Reference<string>("EffectFloor/RequiredPermission", { defaultValue: () => "" })

/** Authenticates a signed request, admits it (nonce, rate limit), checks the endpoint's permission. */
class Signed extends HttpApiMiddleware.Service<Signed, { provides: Caller }>()("EffectFloor/Signed", {
  error: [Unauthorized, Forbidden, TooManyRequests]
}) {}

class OpenApi extends HttpApiGroup.make("open")
  .add(
    HttpApiEndpoint.get("matchmaker", "/matchmakers/:id", {
      params: { id: Schema.Int },
      success: Envelope(Matchmaker),
      error: NotFound
    }).annotate(RequiredPermission, "open:matchmaker:read"),
    HttpApiEndpoint.post("createCompany", "/companies", {
      payload: CompanyCreate,
      success: Envelope(Company)
    }).annotate(RequiredPermission, "open:company:manage"),
    HttpApiEndpoint.post("createGuest", "/guests", {
      payload: GuestCreate,
      success: Envelope(GuestCreated),
      error: NotFound
    }).annotate(RequiredPermission, "open:guest:write"),
    HttpApiEndpoint.put("updateGuest", "/guests/:id", {
      params: { id: Schema.Int },
      payload: GuestChange,
      success: Envelope(GuestUpdated),
      error: NotFound
    }).annotate(RequiredPermission, "open:guest:write")
  )
  .middleware(Signed)
  .prefix("/api/open/v1")
{}

class Api extends HttpApi.make("effect-floor").add(OpenApi) {}

// ---- The implementation ---------------------------------------------------------------------------

const SignedLive = Layer.effect(
  Signed,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const clients = new Map<string, FloorClient | null>()
    const admission = new Admission()

    const clientFor = (appKey: string) =>
      Effect.suspend(() => {
        const cached = clients.get(appKey)
        if (cached !== undefined) return Effect.succeed(cached)
        return Effect.map(sql.unsafe<ClientRow>(CLIENT_SQL, [appKey]), ([row]) => {
          const client = row === undefined ? null : clientOf(row)
          clients.set(appKey, client)
          return client
        })
      })

    return Signed.of((httpEffect, { endpoint }) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const signing = signingOf(request.headers)
        const malformed = checkHeaders(signing)
        if (malformed !== undefined) return yield* refused(malformed)
        const client = yield* Effect.orDie(clientFor(signing.appKey))
        if (client === null) return yield* refused(UNKNOWN_APP_KEY)
        const body = request.method === "GET" ? new Uint8Array(0) : new Uint8Array(yield* Effect.orDie(request.arrayBuffer))
        const { path, rawQuery } = splitUrl(request.url)
        const nowMs = Date.now()
        const wrong = checkSignature(client, signing, { method: request.method, path, rawQuery, body }, nowMs)
        if (wrong !== undefined) return yield* refused(wrong)
        const { local, params, sql: admit } = admission.begin(client, signing, nowMs)
        const [row] = yield* Effect.orDie(sql.unsafe<Admitted>(admit, params))
        const admitted = admission.end(client, local, row)
        if (isRefusal(admitted)) return yield* refused(admitted)
        const permission = Context.get(endpoint.annotations, RequiredPermission)
        if (!client.permissions.has(permission)) {
          return yield* new Forbidden({ code: 403, message: "permission denied", data: { error: "permission_denied" } })
        }
        const response = yield* Effect.provideService(httpEffect, Caller, client)
        return HttpServerResponse.setHeaders(response, rateHeaders(client, admitted.tokens))
      })
    )
  })
)

const OpenLive = HttpApiBuilder.group(
  Api,
  "open",
  Effect.fn(function*(handlers) {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("matchmaker", ({ params }) =>
        Effect.gen(function*() {
          const [row] = yield* Effect.orDie(sql.unsafe<typeof Matchmaker.Type>(MATCHMAKER_SQL, [params.id]))
          if (row === undefined) {
            return yield* new NotFound({ code: 404, message: "matchmaker not found", data: { error: "not_found" } })
          }
          return { code: 200, message: "ok", data: row } as const
        }))
      .handle("createCompany", ({ payload }) =>
        Effect.gen(function*() {
          const [row] = yield* Effect.orDie(
            sql<typeof Company.Type>`WITH c AS (INSERT INTO companies ${sql.insert(payload)} RETURNING ${
              sql.literal(COMPANY_COLUMNS)
            }), e AS (${sql.literal(COMPANY_CREATED_EVENTS_SQL)}) SELECT * FROM c`
          )
          return { code: 200, message: "ok", data: row! } as const
        }))
      .handle("createGuest", ({ payload }) =>
        Effect.gen(function*() {
          // The references at once (they do not depend on each other), then one statement.
          const [company, matchmaker] = yield* Effect.orDie(Effect.all([
            sql.unsafe(COMPANY_EXISTS_SQL, [payload.company_id]),
            payload.matchmaker_id == null ? Effect.succeed(undefined) : sql.unsafe(MATCHMAKER_EXISTS_SQL, [payload.matchmaker_id])
          ], { concurrency: 2 }))
          if (company.length === 0 || (matchmaker !== undefined && matchmaker.length === 0)) {
            return yield* new NotFound({ code: 404, message: "not found", data: { error: "not_found" } })
          }
          const { text, values } = guestInsert(payload)
          const [row] = yield* Effect.orDie(sql.unsafe<Record<string, unknown>>(text, [...values]))
          // The answer's fields; created_at stays the driver's Date, which GuestCreated's Timestamp writes.
          const data = { ...guestCreated(row!), created_at: row!.created_at }
          return { code: 200, message: "ok", data: data as typeof GuestCreated.Type } as const
        }))
      .handle("updateGuest", ({ params, payload }) =>
        Effect.gen(function*() {
          const notFound = new NotFound({ code: 404, message: "not found", data: { error: "not_found" } })
          // The guest's row and the matchmaker named at once, then one statement against the version read.
          const [current, matchmaker] = yield* Effect.orDie(Effect.all([
            sql.unsafe<Record<string, unknown>>(GUEST_VERSIONED_SQL, [params.id]),
            payload.matchmaker_id == null ? Effect.succeed(undefined) : sql.unsafe(MATCHMAKER_EXISTS_SQL, [payload.matchmaker_id])
          ], { concurrency: 2 }))
          if (matchmaker !== undefined && matchmaker.length === 0) return yield* notFound
          if (current[0] === undefined) return yield* notFound
          const { text, values } = guestUpdate(params.id, current[0], payload)
          const [row] = yield* Effect.orDie(sql.unsafe<Record<string, unknown>>(text, [...values]))
          // The row changed in between: read again under its lock and written in a transaction, as the service does.
          const written = row ?? (yield* Effect.orDie(sql.withTransaction(Effect.gen(function*() {
            const [locked] = yield* sql.unsafe<Record<string, unknown>>(GUEST_LOCKED_SQL, [params.id])
            if (locked === undefined) return undefined
            const again = guestUpdate(params.id, locked, payload)
            return (yield* sql.unsafe<Record<string, unknown>>(again.text, [...again.values]))[0]
          }))))
          if (written === undefined) return yield* notFound
          const data = {
            id: written.id,
            updated_at: written.updated_at,
            ...Object.fromEntries(Object.keys(payload).map((k) => [k, written[k]]))
          }
          return { code: 200, message: "ok", data: data as typeof GuestUpdated.Type } as const
        }))
  })
).pipe(Layer.provide(SignedLive))

/** X-Request-Id on every answer and one log line per request. */
const RequestLog = HttpRouter.middleware((httpEffect) =>
  Effect.gen(function*() {
    const started = performance.now()
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = randomUUID()
    const response = yield* httpEffect
    yield* Effect.logInfo("request").pipe(
      Effect.annotateLogs({
        request_id: requestId,
        method: request.method,
        path: splitUrl(request.url).path,
        status: response.status,
        ms: Math.round(performance.now() - started)
      })
    )
    return HttpServerResponse.setHeader(response, "x-request-id", requestId)
  }), { global: true })

/** Effect's JSON log lines, gathered per turn and written asynchronously on stderr. */
const LoggerLive = Logger.layer([Logger.map(Logger.formatJson, (line) => writeStderr(line + "\n"))])

const PgLive = PgClient.layer({
  url: Redacted.make(process.env.DATABASE_URL!),
  maxConnections: 10,
  applicationName: "effect-floor"
})

const ServerLive = HttpRouter.serve(
  Layer.mergeAll(HttpApiBuilder.layer(Api).pipe(Layer.provide(OpenLive)), RequestLog),
  { disableLogger: true, disableListenLog: true }
).pipe(
  Layer.provide(
    NodeHttpServer.layer(() => createServer({ keepAliveTimeout: 65_000 }), {
      port: Number(process.env.PORT ?? 8091),
      host: "127.0.0.1"
    })
  ),
  Layer.provide(PgLive),
  Layer.provide(LoggerLive)
)

NodeRuntime.runMain(Layer.launch(ServerLive))

// The Fastify floor of the request-path benchmark: a Fastify 5 server doing the service's work per
// request on GET /matchmakers/{id}, POST /companies, POST /guests and PUT /guests/{id}, written as Fastify's documentation writes
// one (the signed routes in an encapsulated plugin with an authentication hook, JSON-schema body
// validation, response schemas serialised by fast-json-stringify, the raw body kept by a JSON
// content-type parser for the signature, Fastify's pino logger, pg), so that the benchmark can set
// the service beside a mainstream Node framework. The work beside the framework is the other floors'
// (bench/floor/work.ts): the signing checks, the client row from an in-memory map (secret opened
// once with AES-GCM), the HMAC, the nonce and rate-lease statement, the permission, the endpoint's
// SQL (a write and its events in one statement, bench/floor/pgWork.ts), the envelope (the
// same bytes as the service), the request id and rate-limit headers and one JSON log line per
// request (pino's, written as the service writes its lines).
import { randomUUID } from "node:crypto"

import Fastify, { type FastifyReply, type FastifyRequest, LogController } from "fastify"
import pg from "pg"

import { splitUrl } from "../../src/domain/signing.js"
import { createCompany, createGuest, updateGuest } from "../floor/pgWork.js"
import {
  Admission,
  type Admitted,
  checkHeaders,
  checkSignature,
  CLIENT_SQL,
  clientLookup,
  type ClientRow,
  COMPANY_FIELDS,
  fail,
  type FloorClient,
  type FloorGuestChange,
  type FloorGuestInput,
  GUEST_CHANGE_FIELDS,
  isRefusal,
  MATCHMAKER_SQL,
  rateHeaders,
  type Refusal,
  ROW_TIMES,
  signingOf,
  UNKNOWN_APP_KEY,
  withTimes,
  writeStderr
} from "../floor/work.js"

declare module "fastify" {
  interface FastifyRequest {
    /** The body's bytes as sent (the signature covers them); empty without a body. */
    rawBody: Buffer | null
    /** The authenticated client (set by the signature hook). */
    caller: FloorClient | null
  }
  interface FastifyContextConfig {
    /** The permission a signed route requires. */
    permission?: string
  }
}

const JSON_TYPE = "application/json"
const NO_BODY = Buffer.alloc(0)

// ---- Schemas: the columns of MATCHMAKER_COLUMNS and COMPANY_COLUMNS, in their order -------------------

type JsonType = "integer" | "number" | "string"
const column = (type: JsonType, nullable = false) => ({ type: nullable ? [type, "null"] : type })
const envelope = (data: Record<string, ReturnType<typeof column>>) => ({
  type: "object",
  properties: {
    code: { type: "integer" },
    message: { type: "string" },
    data: { type: "object", properties: data }
  }
})

const matchmaker = envelope({
  id: column("integer"),
  company_id: column("integer", true),
  store_id: column("integer", true),
  name: column("string"),
  phone: column("string", true),
  wechat: column("string", true),
  wechat_id: column("string", true),
  country: column("string", true),
  province: column("string", true),
  city: column("string", true),
  avatar: column("string", true),
  years_exp: column("integer", true),
  specialty: column("string", true),
  intro: column("string", true),
  guest_count: column("integer"),
  match_count: column("integer"),
  success_rate: column("number"),
  credit_score: column("integer"),
  level: column("string"),
  cert_level: column("string"),
  status: column("string"),
  created_at: column("string"),
  updated_at: column("string")
})

const company = envelope({
  id: column("integer"),
  name: column("string"),
  contact_name: column("string", true),
  contact_phone: column("string", true),
  province: column("string", true),
  city: column("string", true),
  district: column("string", true),
  address: column("string", true),
  credit_code: column("string", true),
  logo_url: column("string", true),
  company_type: column("string"),
  cert_level: column("string"),
  status: column("string"),
  created_at: column("string"),
  updated_at: column("string")
})

const companyCreate = {
  type: "object",
  required: ["name"],
  additionalProperties: false,
  properties: {
    ...Object.fromEntries(COMPANY_FIELDS.map((k) => [k, column("string", true)])),
    name: { type: "string", minLength: 1 },
    company_type: { type: "string", enum: ["normal", "franchisee"] }
  }
}

const guestCreated = envelope({
  id: column("integer"),
  name: column("string"),
  gender: column("string"),
  age: column("integer", true),
  requirement: column("string", true),
  requirement_tags: { type: ["object", "null"], additionalProperties: true } as ReturnType<typeof column>,
  status: column("string"),
  created_at: column("string")
})

const guestCreate = {
  type: "object",
  required: ["name", "gender", "company_id"],
  additionalProperties: false,
  properties: {
    name: { type: "string", minLength: 1 },
    gender: { type: "string", enum: ["male", "female"] },
    company_id: { type: "integer" },
    matchmaker_id: { type: ["integer", "null"] }
  }
}

const guestUpdated = envelope({
  id: column("integer"),
  updated_at: column("string"),
  name: column("string"),
  matchmaker_id: column("integer", true)
})

const guestChange = {
  type: "object",
  additionalProperties: false,
  properties: {
    name: { type: "string", minLength: 1 },
    matchmaker_id: { type: ["integer", "null"] }
  }
}

// ---- The server -------------------------------------------------------------------------------------

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, application_name: "fastify-floor" })
const admission = new Admission()
const clientFor = clientLookup(async (appKey) => (await pool.query<ClientRow>(CLIENT_SQL, [appKey])).rows)

const refuse = (reply: FastifyReply, { error, status }: Refusal) => reply.code(status).type(JSON_TYPE).send(fail(status, error, error))

/** Authenticates a signed request, admits it (nonce, rate limit), checks the route's permission. */
const signed = async (request: FastifyRequest, reply: FastifyReply) => {
  const signing = signingOf(request.headers)
  const malformed = checkHeaders(signing)
  if (malformed !== undefined) return refuse(reply, malformed)
  const client = await clientFor(signing.appKey)
  if (client === null) return refuse(reply, UNKNOWN_APP_KEY)
  const { path, rawQuery } = splitUrl(request.url)
  const nowMs = Date.now()
  const wrong = checkSignature(client, signing, { method: request.method, path, rawQuery, body: request.rawBody ?? NO_BODY }, nowMs)
  if (wrong !== undefined) return refuse(reply, wrong)
  const { local, params, sql: admit } = admission.begin(client, signing, nowMs)
  const { rows } = await pool.query<Admitted>(admit, [...params])
  const admitted = admission.end(client, local, rows[0]!)
  if (isRefusal(admitted)) return refuse(reply, admitted)
  const permission = request.routeOptions.config.permission
  if (permission === undefined || !client.permissions.has(permission)) {
    return reply.code(403).type(JSON_TYPE).send(fail(403, "permission_denied", "permission denied"))
  }
  request.caller = client
  reply.headers(rateHeaders(client, admitted.tokens))
}

const app = Fastify({
  logger: { level: "info", stream: { write: writeStderr } },
  logController: new LogController({ disableRequestLogging: true }),
  genReqId: () => randomUUID(),
  requestIdHeader: false,
  keepAliveTimeout: 65_000
})

app.decorateRequest("rawBody", null)
app.decorateRequest("caller", null)

// JSON bodies parsed as Fastify does, their bytes kept for the signature.
app.addContentTypeParser(JSON_TYPE, { parseAs: "buffer" }, (request: FastifyRequest, body: Buffer, done) => {
  request.rawBody = body
  try {
    done(null, JSON.parse(body.toString("utf8")))
  } catch (e) {
    done(Object.assign(e as Error, { statusCode: 400 }))
  }
})

app.addHook("onRequest", async (request, reply) => {
  reply.header("x-request-id", request.id)
})

// One log line per request.
app.addHook("onResponse", async (request, reply) => {
  request.log.info({
    request_id: request.id,
    method: request.method,
    path: splitUrl(request.url).path,
    status: reply.statusCode,
    ms: Math.round(reply.elapsedTime)
  }, "request")
})

await app.register(async (api) => {
  api.addHook("preValidation", signed)

  api.get<{ Params: { id: number } }>("/matchmakers/:id", {
    config: { permission: "open:matchmaker:read" },
    schema: {
      params: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
      response: { 200: matchmaker }
    }
  }, async (request, reply) => {
    const { rows } = await pool.query(MATCHMAKER_SQL, [request.params.id])
    if (rows.length === 0) return reply.code(404).type(JSON_TYPE).send(fail(404, "not_found", "matchmaker not found"))
    return { code: 200, message: "ok", data: withTimes(rows[0], ROW_TIMES) }
  })

  api.post<{ Body: Record<string, string | null> }>("/companies", {
    config: { permission: "open:company:manage" },
    schema: { body: companyCreate, response: { 200: company } }
  }, async (request) => {
    return { code: 200, message: "ok", data: await createCompany(pool, request.body) }
  })

  api.post<{ Body: FloorGuestInput }>("/guests", {
    config: { permission: "open:guest:write" },
    schema: { body: guestCreate, response: { 200: guestCreated } }
  }, async (request, reply) => {
    const guest = await createGuest(pool, request.body)
    if (guest === undefined) return reply.code(404).type(JSON_TYPE).send(fail(404, "not_found", "not found"))
    return { code: 200, message: "ok", data: guest }
  })

  api.put<{ Params: { id: number }; Body: FloorGuestChange }>("/guests/:id", {
    config: { permission: "open:guest:write" },
    schema: {
      params: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
      body: guestChange,
      response: { 200: guestUpdated }
    }
  }, async (request, reply) => {
    // The fields in the contract's order (the answer and the event's changed_fields list them so).
    const change = Object.fromEntries(
      GUEST_CHANGE_FIELDS.filter((k) => request.body[k] !== undefined).map((k) => [k, request.body[k]])
    ) as FloorGuestChange
    const guest = await updateGuest(pool, request.params.id, change)
    if (guest === undefined) return reply.code(404).type(JSON_TYPE).send(fail(404, "not_found", "not found"))
    return { code: 200, message: "ok", data: guest }
  })
}, { prefix: "/api/open/v1" })

await app.listen({ port: Number(process.env.PORT ?? 8092), host: "127.0.0.1" })
process.on("SIGTERM", () => {
  void app.close().then(() => pool.end()).then(() => process.exit(0))
})

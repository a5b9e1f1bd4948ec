// Masking on every channel (DECISIONS §13), swept as an attacker holding a masking client's
// credentials would: distinctive values are planted on records of every kind that carries a masked
// field (guest, matchmaker, company, work WeChat account with an update of its phone in its log,
// group members, a follow-up task through its plan's guest, activity registrations, a card import),
// then every read operation of the served OpenAPI document (a new one is swept by itself), the
// events feed, the webhook deliveries view and the deliveries a receiver gets are searched byte
// by byte for any planted value, JSON-escaped forms included. A client without masking finds every
// planted value in the same places (so the sweep can fail). And with traces exported and logs
// captured, requests that carry planted values in their query and body leave none in any span or
// log line, for a masking client or not.
import { readFileSync } from "node:fs"

import { describe, expect, it, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"

import { CardTasksJob } from "../jobs/CardTasks.js"
import { WebhookJobsLive } from "../jobs/Webhooks.js"
import { ALL_PERMISSIONS } from "../schema/Permissions.js"
import { runAdmin } from "../src/admin/commands.js"
import { CardParserTest } from "../src/card/CardParser.js"
import { emptyParsedCard } from "../src/card/types.js"
import { formatTimestamp } from "../src/domain/time.js"
import { logTimestamp, renderLog } from "../src/logging.js"
import { otlpTracingLayer } from "../src/observability/tracing.js"
import { Clients, WEBHOOK_EVENT_TYPES } from "../src/services/Clients.js"
import { eventually } from "./support/eventually.js"
import { cardForm } from "./support/forms.js"
import { liveAppLayer, serverLayer, signedClient, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"
import { makeReceiver, type Received } from "./support/receiver.js"

const BASE = "/api/open/v1"

/** The planted values: each masked field's kind once or more, none of them anywhere else. */
const PLANTED = {
  guestPhone: "13712345601",
  matchmakerPhone: "13712345602",
  accountPhoneBefore: "13712345603",
  accountPhoneAfter: "13712345604",
  registrationPhone: "13712345605",
  cardPhone: "13712345606",
  contactPhone: "0731-88776655",
  guestWechat: "wx_planted_guest_7781",
  matchmakerWechat: "wx_planted_mm_7782",
  matchmakerWechatId: "wxid_planted_7783",
  workplace: "星河湾栽种工坊",
  cardWorkplace: "卡片栽种研究院",
  creditCode: "91430100MA4PLANT8X",
  birthDate: "1987-06-05",
  sourceId: "SRC-PLANTED-7784"
} as const

type Planted = keyof typeof PLANTED

const escapeUnicode = (text: string, upper: boolean) =>
  text.replace(/[^\x20-\x7e]/gu, (c) => {
    const hex = c.charCodeAt(0).toString(16).padStart(4, "0")
    return `\\u${upper ? hex.toUpperCase() : hex}`
  })

/** The forms a value may take in bytes: as is, JSON-escaped (twice: inside a JSON string), \u-escaped, URL-encoded. */
const formsOf = (value: string): ReadonlyArray<string> => {
  const json = JSON.stringify(value).slice(1, -1)
  const encoded = encodeURIComponent(value)
  return [
    ...new Set([
      value,
      json,
      JSON.stringify(json).slice(1, -1),
      escapeUnicode(value, false),
      escapeUnicode(value, true),
      encoded,
      encoded.toLowerCase(),
      encoded.replaceAll("%20", "+")
    ])
  ]
}

/** The values (by name) of `values` found in `text`, in any of their forms. */
const foundIn = <K extends string>(values: Readonly<Record<K, string>>, text: string): ReadonlyArray<K> =>
  (Object.keys(values) as Array<K>).filter((name) => formsOf(values[name]).some((form) => text.includes(form)))

/** The planted values (by name) found in `text`, in any of their forms. */
const plantedIn = (text: string): ReadonlyArray<Planted> => foundIn(PLANTED, text)

/** What one answer or delivery showed: where it came from and every byte of it. */
interface Seen {
  readonly where: string
  readonly bytes: string
}

const leaksOf = (seen: ReadonlyArray<Seen>, values: Readonly<Record<string, string>> = PLANTED) =>
  seen.flatMap(({ bytes, where }) => foundIn(values, bytes).map((name) => `${where}: ${name}`))

/** A birth date PostgreSQL cannot store (it has no year 0): sent, never stored. */
const REFUSED_BIRTH_DATE = "0000-01-01"

const headersText = (headers: Headers | Record<string, string>): string =>
  JSON.stringify(headers instanceof Headers ? [...headers.entries()] : Object.entries(headers))

interface Operation {
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly schema?: { readonly maximum?: number } }>
}
interface Document {
  readonly paths: Record<string, Record<string, Operation>>
}

/** The served document's read operations: every GET under the API prefix. */
const readOperations = (baseUrl: string) =>
  Effect.map(
    Effect.promise(() => fetch(`${baseUrl}${BASE}/openapi.json`).then((r) => r.json() as Promise<Document>)),
    (doc) =>
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops).filter(([method]) => method === "get").map(([, op]) => ({ path, op }))
      )
  )

/**
 * A path template with its ids filled from the planted records: `ids` maps a template's head (up
 * to its first parameter) to the id; a template whose head is not there fails the test, so a new
 * endpoint under a new resource asks for its record.
 */
const fillPath = (template: string, ids: Readonly<Record<string, string | number>>): string => {
  const end = template.indexOf("}")
  if (end === -1) return template
  const head = template.slice(0, end + 1)
  const id = ids[head]
  if (id === undefined) throw new Error(`no planted record for ${head} (add one to the sweep)`)
  return fillPath(template.replace(/\{[^}]+\}/u, String(id)), ids)
}

type Credentials = { readonly appKey: string; readonly appSecret: string }

/**
 * Every read operation of the document as this client, each list at its largest page, the events
 * feed followed to its end: what each answer showed (status line, headers, body).
 */
const sweepReads = (baseUrl: string, credentials: Credentials, ids: Readonly<Record<string, string | number>>) =>
  Effect.gen(function*() {
    const seen: Array<Seen> = []
    const operations = yield* readOperations(baseUrl)
    for (const { op, path: template } of operations) {
      const path = fillPath(template, ids)
      const pageSize = op.parameters?.find((p) => p.name === "page_size" && p.in === "query")?.schema?.maximum
      let query = pageSize === undefined ? "" : `page_size=${pageSize}`
      for (let page = 0; page < 100; page++) {
        const r = yield* rawRequest(baseUrl, { path, query, credentials })
        seen.push({ where: `GET ${template}?${query}`, bytes: `${r.status} ${headersText(r.headers)} ${r.text}` })
        expect(r.status, `GET ${path}?${query}: ${r.text}`).toBe(200)
        const data = r.json.data as { list?: ReadonlyArray<unknown>; total?: number; next_after?: string | null }
        // A page holds everything planted (a list longer than its largest page would hide records).
        if (typeof data.total === "number") expect(data.total, `GET ${template}`).toBeLessThanOrEqual(data.list!.length)
        // The events feed: on to its end.
        if (data.next_after === undefined || data.next_after === null || data.list!.length === 0) break
        query = `page_size=${pageSize}&after=${data.next_after}`
      }
    }
    return { seen, operations: operations.map((o) => o.path) }
  })

/** A card the parser reads whatever the image: a guest with a planted phone and workplace. */
const plantedCardParser = CardParserTest({
  method: "ai",
  confidence: "high",
  parsed: { ...emptyParsedCard(), name: "卡片嘉宾", gender: "female", age: 29, phone: PLANTED.cardPhone, workplace: PLANTED.cardWorkplace }
})

const PNG = new Uint8Array(readFileSync(new URL("./fixtures/cards/card-clean.png", import.meta.url)))
const uniquePng = (tag: string) => new Uint8Array([...PNG, ...new TextEncoder().encode(`sweep-${tag}-${Date.now()}`)])

/** The app, an API server, the webhook dispatcher and the card runner over a private database, on the real clock. */
const sweepLayer = Layer.mergeAll(serverLayer, WebhookJobsLive, CardTasksJob).pipe(
  Layer.provideMerge(
    liveAppLayer(
      { rateLimitBurst: 1_000_000, webhookRetrySchedule: [300, 300], webhookPollSeconds: 1, cardTaskPollSeconds: 0.2 },
      plantedCardParser
    )
  ),
  Layer.provideMerge(FetchHttpClient.layer),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
)

/** A client whose webhook posts every event type to `url`. */
const subscribed = (url: string, masking: boolean) =>
  Effect.gen(function*() {
    const ctx = yield* signedClient(ALL_PERMISSIONS, { masking })
    yield* Effect.orDie((yield* Clients).webhook(ctx.credentials.appKey, { _tag: "Set", url, events: WEBHOOK_EVENT_TYPES }))
    return ctx
  })

const admin = (...argv: Array<string>) => Effect.orDie(runAdmin(argv))

/** Wall time in the platform zone, `minutes` from now. */
const wallTime = (minutes: number) => formatTimestamp(new Date(Date.now() + minutes * 60_000), "Asia/Shanghai")

layer(sweepLayer, { excludeTestServices: true, timeout: 60_000 })("masking on every channel", (it) => {
  it.effect(
    "a masking client finds no planted value in any byte of any read, the events feed, its deliveries view, its webhook deliveries or the answers to its writes; a client without masking finds every one",
    () =>
      Effect.gen(function*() {
        const receiver = yield* makeReceiver
        const masking = yield* subscribed(`${receiver.url}/masking`, true)
        const plain = yield* subscribed(`${receiver.url}/plain`, false)
        const { client } = plain

        // Planted by a client without masking, on every kind of record that carries them.
        const company = yield* client.companies.create({
          payload: { name: "栽种婚介", contact_phone: PLANTED.contactPhone, credit_code: PLANTED.creditCode }
        })
        const matchmaker = yield* client.matchmakers.create({
          payload: {
            name: "栽种红娘",
            company_id: company.id,
            phone: PLANTED.matchmakerPhone,
            wechat: PLANTED.matchmakerWechat,
            wechat_id: PLANTED.matchmakerWechatId
          }
        })
        const guest = yield* client.guests.create({
          payload: {
            name: "栽种嘉宾",
            gender: "female",
            company_id: company.id,
            matchmaker_id: matchmaker.id,
            phone: PLANTED.guestPhone,
            wechat: PLANTED.guestWechat,
            workplace: "旧单位",
            birth_date: PLANTED.birthDate,
            source_id: PLANTED.sourceId,
            age: 30
          }
        })
        yield* client.guests.update({ params: { id: guest.id }, payload: { workplace: PLANTED.workplace } })
        const other = yield* client.guests.create({ payload: { name: "另一位", gender: "male", company_id: company.id, age: 31 } })
        const account = yield* client.workWechats.create({ payload: { wechat_number: "planted_acct", phone: PLANTED.accountPhoneBefore } })
        // The account's log gets an update entry from one planted phone to the other.
        yield* client.workWechats.update({ params: { id: account.id }, payload: { phone: PLANTED.accountPhoneAfter } })
        yield* client.workWechats.associate({
          params: { id: account.id },
          payload: { target_type: "matchmaker", target_id: matchmaker.id }
        })
        const group = yield* client.workGroups.create({ payload: { name: "栽种群" } })
        yield* client.workGroups.update({ params: { id: group.id }, payload: { remark: "改过" } })
        yield* client.workGroups.addMatchmaker({ params: { id: group.id }, payload: { matchmaker_id: matchmaker.id } })
        yield* client.workGroups.addWorkWechat({ params: { id: group.id }, payload: { work_wechat_id: account.id } })
        const plan = (yield* admin("follow-up", "plans", "create", "--guest", String(guest.id), "--days", "1", "--type", "recommend")) as {
          id: number
        }
        const task = (yield* client.followUps.list({ query: {} })).list.find((t) => t.follow_up_id === plan.id)!
        const activity = yield* client.activities.create({
          payload: {
            title: "栽种联谊",
            address: "长沙",
            start_time: wallTime(60 * 24),
            end_time: wallTime(60 * 28),
            company_id: company.id
          }
        })
        yield* admin("activities", "approve", String(activity.id))
        yield* admin("activities", "open", String(activity.id))
        yield* client.activities.register({
          params: { id: activity.id },
          payload: { guest_id: other.id, phone: PLANTED.registrationPhone }
        })
        yield* client.matches.create({ payload: { guest_a_id: guest.id, guest_b_id: other.id } })
        const user = (yield* admin("users", "create", "--name", "栽种用户")) as { id: number }
        yield* client.memberships.create({ payload: { user_id: user.id, plan_id: 1, guest_id: guest.id } })
        const accepted = yield* client.guests.createFromCard({
          payload: cardForm(uniquePng("import"), { matchmaker_id: String(matchmaker.id) })
        })
        const cardTaskId = (accepted as { task_id: string }).task_id
        yield* eventually(
          "the card task done",
          client.guests.cardTask({ params: { task_id: cardTaskId } }).pipe(Effect.orDie),
          (t) => t.status === "done"
        )

        // The masking client's own writes answer with stored values too: a registration whose
        // phone defaults to the guest's, a card parse, a refused duplicate.
        const answers: Array<Seen> = []
        const write = (method: string, path: string, body: string | Uint8Array, contentType = "application/json") =>
          Effect.map(
            rawRequest(masking.baseUrl, { method, path: `${BASE}${path}`, body, contentType, credentials: masking.credentials }),
            (r) => {
              answers.push({ where: `${method} ${path}`, bytes: `${r.status} ${headersText(r.headers)} ${r.text}` })
              return r
            }
          )
        const registered = yield* write("POST", `/activities/${activity.id}/register`, JSON.stringify({ guest_id: guest.id }))
        expect(registered.json.data).toMatchObject({ guest_id: guest.id, phone: "137****5601" })
        expect((yield* write("POST", `/activities/${activity.id}/register`, JSON.stringify({ guest_id: guest.id }))).status).toBe(400)
        expect(
          (yield* write("POST", "/work-wechats", JSON.stringify({ wechat_number: "dup_acct", phone: PLANTED.accountPhoneAfter }))).json
        )
          .toMatchObject({ data: { error: "duplicate_phone" } })
        const form = yield* Effect.promise(async () => {
          const request = new Request("http://form.invalid/", { method: "POST", body: cardForm(uniquePng("parse")) })
          return { body: new Uint8Array(await request.arrayBuffer()), contentType: request.headers.get("content-type")! }
        })
        const parsed = yield* write("POST", "/guests/parse-card", form.body, form.contentType)
        expect(parsed.json.data).toMatchObject({ parsed: { phone: "137****5606", workplace: "***" } })

        // Every event reached both receivers before the views of deliveries are read.
        const feed = yield* rawRequest(masking.baseUrl, {
          path: `${BASE}/events`,
          query: "page_size=1000",
          credentials: masking.credentials
        })
        const eventIds = (feed.json.data.list as Array<{ id: string }>).map((e) => e.id)
        const types = new Set((feed.json.data.list as Array<{ type: string }>).map((e) => e.type))
        // The planted records' events: every resource that carries a masked field.
        for (const type of ["guest.created", "guest.updated", "guest.card_created", "matchmaker.created", "company.created"]) {
          expect(types).toContain(type)
        }
        for (const type of ["work_wechat.updated", "work_group.members_changed", "activity.registered", "follow_up.task_created"]) {
          expect(types).toContain(type)
        }
        const deliveredTo = (path: string) => new Set(receiver.received.filter((r) => r.path === path).map((r) => r.headers["webhook-id"]))
        yield* eventually(
          "every event delivered to both receivers",
          Effect.sync(() => [deliveredTo("/masking"), deliveredTo("/plain")]),
          (sets) => sets.every((s) => eventIds.every((id) => s.has(id)))
        )

        const ids = {
          [`${BASE}/matchmakers/{id}`]: matchmaker.id,
          [`${BASE}/guests/{id}`]: guest.id,
          [`${BASE}/guests/card-task/{task_id}`]: cardTaskId,
          [`${BASE}/work-wechats/{id}`]: account.id,
          [`${BASE}/work-groups/{id}`]: group.id,
          [`${BASE}/companies/{id}`]: company.id,
          [`${BASE}/follow-up/tasks/{task_id}`]: task.id
        }
        const maskedReads = yield* sweepReads(masking.baseUrl, masking.credentials, ids)
        // The sweep went through the operations that carry masked values.
        for (const path of ["/work-wechats/{id}/logs", "/work-groups/{id}/matchmakers", "/follow-up/tasks/{task_id}", "/events"]) {
          expect(maskedReads.operations).toContain(`${BASE}${path}`)
        }
        const deliveries = (path: string): ReadonlyArray<Seen> =>
          receiver.received.filter((r: Received) => r.path === path).map((r) => ({
            where: `webhook ${r.headers["webhook-id"]}`,
            bytes: `${headersText(r.headers)} ${r.body}`
          }))

        expect(leaksOf([...maskedReads.seen, ...deliveries("/masking"), ...answers])).toEqual([])

        // The control: without masking the same reads and deliveries show every planted value.
        const plainReads = yield* sweepReads(plain.baseUrl, plain.credentials, ids)
        const shown = new Set(plainReads.seen.flatMap((s) => plantedIn(s.bytes)))
        expect([...shown].sort()).toEqual(Object.keys(PLANTED).sort())
        const delivered = new Set(deliveries("/plain").flatMap((s) => plantedIn(s.bytes)))
        expect([...delivered].sort()).toEqual(Object.keys(PLANTED).sort())
        const logs = plainReads.seen.filter((s) => s.where.startsWith(`GET ${BASE}/work-wechats/{id}/logs`))
        expect(plantedIn(logs.map((s) => s.bytes).join(""))).toEqual(["accountPhoneBefore", "accountPhoneAfter"])
      })
  )
})

/** The real clock, for what runs on effect's own timers inside a test (the OTLP exporter's batches). */
const liveClock = Layer.succeed(Clock.Clock)(Clock.Clock.defaultValue())

describe("traces and logs", () => {
  it.effect(
    "requests carrying planted values in their query and body leave none in any exported span or log line, whoever the client",
    () =>
      Effect.gen(function*() {
        const collector = yield* makeReceiver
        const lines: Array<string> = []
        // The service's own JSON log lines (logging.ts), collected instead of written on stderr.
        const collecting = Logger.layer([
          Logger.map(Logger.formatStructured, (entry) =>
            lines.push(renderLog({
              message: entry.message,
              level: entry.level,
              timestamp: logTimestamp(new Date(entry.timestamp), "Asia/Shanghai"),
              cause: entry.cause,
              annotations: entry.annotations,
              spans: entry.spans,
              fiberId: entry.fiberId
            }, { format: "json", colors: false })))
        ])
        yield* Effect.scoped(
          Effect.gen(function*() {
            const { baseUrl } = yield* TestServer
            for (const masking of [true, false]) {
              const { client, credentials } = yield* signedClient(ALL_PERMISSIONS, { masking })
              const send = (method: string, path: string, query: string, body?: object) =>
                rawRequest(baseUrl, {
                  method,
                  path: `${BASE}${path}`,
                  query,
                  credentials,
                  ...(body === undefined ? {} : { body: JSON.stringify(body) })
                })
              const company = yield* client.companies.create({ payload: { name: `痕迹婚介${masking}` } })
              for (const keyword of [PLANTED.guestPhone, PLANTED.workplace, PLANTED.matchmakerWechat]) {
                const q = `keyword=${encodeURIComponent(keyword)}`
                for (const path of ["/guests", "/matchmakers", "/work-wechats", "/work-groups", "/companies"]) {
                  expect((yield* send("GET", path, q)).status).toBe(200)
                }
              }
              // A filter by a masked field (refused for a masking client) and its value.
              yield* send("GET", "/guests", `workplace=${encodeURIComponent(PLANTED.workplace)}&page_size=5`)
              const created = yield* send("POST", "/guests", "", {
                name: "痕迹嘉宾",
                gender: "male",
                company_id: company.id,
                phone: PLANTED.guestPhone,
                wechat: PLANTED.guestWechat,
                workplace: PLANTED.workplace,
                birth_date: PLANTED.birthDate,
                source_id: PLANTED.sourceId
              })
              expect(created.status).toBe(200)
              const [before, after] = masking
                ? [PLANTED.accountPhoneBefore, PLANTED.accountPhoneAfter]
                : [PLANTED.registrationPhone, PLANTED.cardPhone]
              const acct = yield* send("POST", "/work-wechats", "", { wechat_number: `trace_${masking}`, phone: before })
              expect((yield* send("PUT", `/work-wechats/${acct.json.data.id}`, "", { phone: after })).status).toBe(200)
              // Refused writes: a duplicate, an invalid value beside planted ones, a date PostgreSQL has not.
              expect((yield* send("POST", "/work-wechats", "", { wechat_number: `dup_${masking}`, phone: after })).status).toBe(400)
              yield* send("POST", "/companies", "", { name: "x", contact_phone: PLANTED.contactPhone, credit_code: "bad" })
              yield* send("POST", "/companies", "", { name: "y", contact_phone: PLANTED.contactPhone, credit_code: PLANTED.creditCode })
              yield* send("POST", "/guests", "", {
                name: "z",
                gender: "male",
                company_id: company.id,
                birth_date: REFUSED_BIRTH_DATE,
                phone: PLANTED.cardPhone
              })
              yield* send("POST", "/matchmakers", "", { name: "m", phone: PLANTED.matchmakerPhone, wechat_id: PLANTED.matchmakerWechatId })
            }
          }).pipe(
            // The tracer and the collecting logger below the server (its request fibers inherit
            // them); released at the end of the scope, which flushes the spans to the collector.
            Effect.provide(
              testServerLayer().pipe(
                Layer.provideMerge(
                  otlpTracingLayer({ endpoint: collector.url, serviceName: "masking-test" }).pipe(Layer.provide(liveClock))
                ),
                Layer.provideMerge(collecting),
                Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "All"))
              )
            )
          )
        )
        const spans = collector.received.filter((r) => r.path === "/v1/traces")
        expect(spans.length).toBeGreaterThan(0)
        // The premise: the requests are in the export and in the log, their queries redacted.
        const exported = spans.map((r) => r.body).join("\n")
        expect(exported).toContain("keyword=REDACTED")
        expect(exported).toContain("/api/open/v1/guests")
        expect(lines.some((l) => l.includes("/api/open/v1/work-wechats"))).toBe(true)
        expect(leaksOf([
          ...spans.map((r, i) => ({ where: `span batch ${i}`, bytes: r.body })),
          ...lines.map((l, i) => ({ where: `log line ${i}`, bytes: l }))
        ], { ...PLANTED, refusedBirthDate: REFUSED_BIRTH_DATE })).toEqual([])
      }),
    { timeout: 60_000 }
  )
})

// The scope matrix (issue 36, DECISIONS §14): two companies, 甲方 (A) and 乙方 (B), with records of
// every kind (matchmakers, guests, an activity with its registrations, follow-up plans and tasks, a
// match, memberships, a card task) and the platform-wide ones (a work WeChat account, a group, an
// image blacklist record). A client bound to A with every permission calls EVERY operation of the
// served OpenAPI document (an operation without a case below fails the test, so a new endpoint
// cannot be missed), once against A's records and once against B's: path ids, query filters and
// body references. Every answer it gets is searched for B's data (names, phones, ids by kind); a
// list's `total` must count no B record; its events feed must list no B event and its webhook no
// delivery of one. B's records answer exactly what an unknown id answers (404 not_found, the same
// body); a write naming B's company is 403 out_of_scope; the platform-wide operations are 403
// out_of_scope. An unscoped client (the control) is served B's records and finds B's markers
// wherever the scoped one must not, so the search can fail; B's records are unchanged at the end.
import { readFileSync } from "node:fs"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { runAdmin } from "../src/admin/commands.js"
import { formatTimestamp } from "../src/domain/time.js"
import { WEBHOOK_EVENT_TYPES } from "../src/services/Clients.js"
import { cardForm } from "./support/forms.js"
import { fakeCardParser, signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest, type RawResponse } from "./support/raw.js"

const BASE = "/api/open/v1"
const TZ = "Asia/Shanghai"
/** An id no record has (the answers for B's records must equal the answers for it). */
const UNKNOWN_ID = 2_000_000_000
const UNKNOWN_CARD_TASK = "ct_" + "0".repeat(24)
const UNKNOWN_EVENT = "evt_unknown"

type Credentials = { readonly appKey: string; readonly appSecret: string }

/** One request as sent: a JSON body or a multipart form. */
interface Call {
  readonly method: string
  readonly path: string
  readonly query?: string
  readonly json?: unknown
  readonly form?: () => FormData
}

/** A check of an answer: undefined when it holds, else what was wrong. */
type Check = (r: RawResponse) => string | undefined

const show = (r: RawResponse) => `${r.status} ${r.text.slice(0, 300)}`

const served: Check = (r) => r.status === 200 && r.json.code === 200 ? undefined : `expected 200, got ${show(r)}`
const refused = (status: number, reason: string): Check => (r) =>
  r.status === status && r.json.data?.error === reason ? undefined : `expected ${status} ${reason}, got ${show(r)}`
const notFound = refused(404, "not_found")
const outOfScope = refused(403, "out_of_scope")
/** A list filtered by a record outside the scope: refused (403 out_of_scope, 404) or empty, never B's records. */
const emptyOrRefused: Check = (r) => {
  if (r.status === 403 && r.json.data?.error === "out_of_scope") return undefined
  if (r.status === 404 && r.json.data?.error === "not_found") return undefined
  if (r.status === 200 && Array.isArray(r.json.data?.list) && r.json.data.list.length === 0 && r.json.data.total === 0) return undefined
  return `expected an empty list, 403 out_of_scope or 404, got ${show(r)}`
}
/** A batch whose every item fails alone with this reason. */
const itemsFail = (reason: string): Check => (r) => {
  const results = r.json.data?.results as ReadonlyArray<{ status: string; error?: string }> | undefined
  return r.status === 200 && results !== undefined && results.length > 0 &&
      results.every((x) => x.status === "failure" && x.error === reason)
    ? undefined
    : `expected every item to fail with ${reason}, got ${show(r)}`
}
const itemsSucceed: Check = (r) => {
  const results = r.json.data?.results as ReadonlyArray<{ status: string }> | undefined
  return r.status === 200 && results !== undefined && results.every((x) => x.status === "success")
    ? undefined
    : `expected every item to succeed, got ${show(r)}`
}

/** A call on the client's own (A's) records and what it must answer. */
interface Mine {
  readonly call: Call
  readonly check: Check
}

/**
 * A call naming B's record `id`: `make` builds it for any id, so that the same call with an id
 * nobody has is the answer it must equal (`asUnknown`: same status, same body but for the id).
 */
interface Theirs {
  readonly id: number | string
  readonly unknown?: number | string
  readonly make: (id: number | string) => Call
  readonly check: Check
  readonly asUnknown: boolean
}

interface Case {
  readonly mine: ReadonlyArray<Mine>
  readonly theirs: ReadonlyArray<Theirs>
  /** Which client makes the calls (credentials/rotate is made by a spare client: it changes the secret). */
  readonly spare?: boolean
}

const get = (path: string, query = ""): Call => ({ method: "GET", path, query })
const send = (method: string, path: string, json?: unknown): Call => ({ method, path, ...(json === undefined ? {} : { json }) })

/** B's record by id: 404 not_found, the very answer of an unknown id. */
const hidden = (id: number | string, make: (id: number | string) => Call, unknown?: number | string): Theirs => ({
  id,
  make,
  check: notFound,
  asUnknown: true,
  ...(unknown === undefined ? {} : { unknown })
})
/** A write naming B's company: 403 out_of_scope. */
const namesB = (id: number, make: (id: number | string) => Call): Theirs => ({ id, make, check: outOfScope, asUnknown: false })
/** A list filtered by B's record. */
const filteredBy = (id: number, make: (id: number | string) => Call): Theirs => ({ id, make, check: emptyOrRefused, asUnknown: false })
/** A batch naming B's record or company in its items. */
const batchItems = (id: number, reason: string, make: (id: number | string) => Call): Theirs => ({
  id,
  make,
  check: itemsFail(reason),
  asUnknown: false
})

const PNG = new Uint8Array(readFileSync(new URL("./fixtures/cards/card-clean.png", import.meta.url)))
let pngs = 0
const uniquePng = () => new Uint8Array([...PNG, ...new TextEncoder().encode(`scope-matrix-${Date.now()}-${pngs++}`)])

const admin = (...argv: Array<string>) => Effect.orDie(runAdmin(argv)) as Effect.Effect<unknown>

/** Wall time in the platform zone, `hours` from now. */
const wallTime = (hours: number) => formatTimestamp(new Date(Date.now() + hours * 3_600_000), TZ)

interface Operation {
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly schema?: { readonly maximum?: number } }>
}

/** Every operation of the served document, `METHOD /path`, with the largest page_size of a list. */
const operationsOf = (baseUrl: string) =>
  Effect.map(
    Effect.promise(() =>
      fetch(`${baseUrl}${BASE}/openapi.json`).then((r) => r.json() as Promise<{ paths: Record<string, Record<string, Operation>> }>)
    ),
    (doc) =>
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, op]) => ({
          key: `${method.toUpperCase()} ${path.slice(BASE.length)}`,
          pageSize: op.parameters?.find((p) => p.name === "page_size" && p.in === "query")?.schema?.maximum
        }))
      )
  )

const formBytes = (form: FormData) =>
  Effect.promise(async () => {
    const request = new Request("http://form.invalid/", { method: "POST", body: form })
    return { body: new Uint8Array(await request.arrayBuffer()), contentType: request.headers.get("content-type")! }
  })

const call = (baseUrl: string, credentials: Credentials, c: Call) =>
  Effect.gen(function*() {
    const body = c.form !== undefined ? yield* formBytes(c.form()) : c.json === undefined ? undefined : {
      body: JSON.stringify(c.json),
      contentType: "application/json"
    }
    return yield* rawRequest(baseUrl, {
      method: c.method,
      path: `${BASE}${c.path}`,
      query: c.query ?? "",
      credentials,
      ...(body === undefined ? {} : body)
    })
  })

/** One company's records (made by the platform's unscoped client). */
interface Side {
  readonly company: number
  readonly matchmaker: number
  readonly guests: readonly [number, number, number, number]
  readonly activity: number
  readonly tasks: ReadonlyArray<number>
  readonly match: number
  readonly membership: number
  readonly user: number
  readonly cardTask: string
}

/** Which kind of record an id field names (the leak search compares it with B's ids of that kind). */
const KIND_OF_FIELD: Record<string, string> = {
  company_id: "company",
  guest_id: "guest",
  guest_a_id: "guest",
  guest_b_id: "guest",
  matched_guest_id: "guest",
  matchmaker_id: "matchmaker",
  guest_a_matchmaker_id: "matchmaker",
  guest_b_matchmaker_id: "matchmaker",
  activity_id: "activity",
  task_id: "task",
  user_id: "user"
}
/** The kind of the records an operation (by its first path segment) or an event (by its type) lists. */
const KIND_OF_RESOURCE: Record<string, string> = {
  guests: "guest",
  guest: "guest",
  matchmakers: "matchmaker",
  matchmaker: "matchmaker",
  companies: "company",
  company: "company",
  activities: "activity",
  activity: "activity",
  "follow-up": "task",
  follow_up: "task",
  matches: "match",
  match: "match",
  memberships: "membership",
  membership: "membership"
}

const NESTED_KIND: Record<string, string> = { task: "task", guest: "guest", existing_guest: "guest", matchmaker: "matchmaker" }

type Ids = Record<string, ReadonlySet<number | string>>

const idsOf = (s: Side): Ids => ({
  company: new Set([s.company]),
  matchmaker: new Set([s.matchmaker]),
  guest: new Set(s.guests),
  activity: new Set([s.activity]),
  task: new Set([...s.tasks, s.cardTask]),
  match: new Set([s.match]),
  membership: new Set([s.membership]),
  user: new Set([s.user])
})

/**
 * B's data in an answer: a marker string (every B name carries 乙方; phones), an id field naming a
 * B record of its kind, or a record (a list item, a detail, an event's record) whose id is B's.
 */
const leaksIn = (value: unknown, kind: string | undefined, ids: Ids, markers: ReadonlyArray<string>, top = true): Array<string> => {
  if (typeof value === "string") return markers.filter((m) => value.includes(m)).map((m) => `"${m}"`)
  if (Array.isArray(value)) return value.flatMap((v) => leaksIn(v, kind, ids, markers, top))
  if (value === null || typeof value !== "object") return []
  const record = value as Record<string, unknown>
  const own = typeof record.type === "string" && "data" in record
    ? KIND_OF_RESOURCE[record.type.slice(0, record.type.indexOf("."))]
    : kind
  const found: Array<string> = []
  for (const [key, v] of Object.entries(record)) {
    const fieldKind = KIND_OF_FIELD[key]
    if (fieldKind !== undefined && (typeof v === "number" || typeof v === "string") && ids[fieldKind]?.has(v)) {
      found.push(`${key}=${v}`)
    }
    if (key === "id" && top && own !== undefined && (typeof v === "number" || typeof v === "string") && ids[own]?.has(v)) {
      found.push(`${own} id=${v}`)
    }
    // Records are the answer's data, a list's items, an event's data and the records a detail
    // carries whole (a task's guest); other objects are parts of one (their id fields still count).
    const nested = key === "list" ? kind : key === "data" ? own : NESTED_KIND[key]
    found.push(...leaksIn(v, nested ?? kind, ids, markers, top && nested !== undefined))
  }
  return found
}

layer(testServerLayer({ rateLimitBurst: 1_000_000 }, fakeCardParser), { timeout: 60_000 })("scope matrix", (it) => {
  it.effect(
    "a client bound to company A is served A's records by every operation of the document and learns nothing of company B's: B's records answer as unknown ids, writes naming B are 403 out_of_scope, no total, event or webhook delivery counts B; an unscoped client sees both",
    () =>
      Effect.gen(function*() {
        const { baseUrl, client: platform, credentials: platformKey } = yield* signedClient()
        const a = (yield* platform.companies.create({ payload: { name: "甲方婚介" } })).id
        const b = (yield* platform.companies.create({ payload: { name: "乙方婚介", contact_phone: "0731-99990002" } })).id
        // The scoped client and the control subscribe to every event before any record is made.
        const scoped = yield* signedClient(undefined, { scope: [a] })
        const spare = yield* signedClient(undefined, { scope: [a] })
        const webhook = { url: "http://127.0.0.1:9/hook", events: [...WEBHOOK_EVENT_TYPES], enabled: true }
        for (const c of [scoped.client, platform]) yield* c.selfService.updateWebhook({ payload: webhook })

        const makeSide = (tag: "甲方" | "乙方", company: number, digit: string) =>
          Effect.gen(function*() {
            const phone = (n: number) => `139${digit}000000${n}`
            const matchmaker = yield* platform.matchmakers.create({ payload: { name: `${tag}红娘`, company_id: company, phone: phone(9) } })
            const guest = (n: number, gender: "female" | "male") =>
              Effect.map(
                platform.guests.create({
                  payload: { name: `${tag}嘉宾${n}`, gender, company_id: company, matchmaker_id: matchmaker.id, phone: phone(n), age: 30 }
                }),
                (g) => g.id
              )
            const guests = [yield* guest(1, "female"), yield* guest(2, "male"), yield* guest(3, "female"), yield* guest(4, "male")] as const
            const activity = yield* platform.activities.create({
              payload: { title: `${tag}联谊`, address: "长沙", start_time: wallTime(24), end_time: wallTime(28), company_id: company }
            })
            yield* admin("activities", "approve", String(activity.id))
            yield* admin("activities", "open", String(activity.id))
            yield* platform.activities.register({ params: { id: activity.id }, payload: { guest_id: guests[0], name: `${tag}报名` } })
            // Four plans of a task due today each (one per operation that changes a task).
            const plans: Array<number> = []
            for (let i = 0; i < 4; i++) {
              const plan = yield* admin("follow-up", "plans", "create", "--guest", String(guests[0]), "--days", "1", "--type", "recommend")
              plans.push((plan as { id: number }).id)
            }
            const tasks = (yield* platform.followUps.list({ query: { page_size: 100 } })).list
              .filter((t) => plans.includes(t.follow_up_id)).map((t) => t.id)
            expect(tasks).toHaveLength(4)
            const match = yield* platform.matches.create({ payload: { guest_a_id: guests[0], guest_b_id: guests[1] } })
            const user = (yield* admin("users", "create", "--name", `${tag}用户`)) as { id: number }
            const membership = yield* platform.memberships.create({ payload: { user_id: user.id, plan_id: 1, guest_id: guests[0] } })
            const card = (yield* platform.guests.createFromCard({
              payload: cardForm(uniquePng(), { company_id: String(company), matchmaker_id: String(matchmaker.id) })
            })) as { task_id: string }
            return {
              company,
              matchmaker: matchmaker.id,
              guests,
              activity: activity.id,
              tasks,
              match: match.id,
              membership: membership.id,
              user: user.id,
              cardTask: card.task_id
            } satisfies Side
          })
        const A = yield* makeSide("甲方", a, "1")
        const B = yield* makeSide("乙方", b, "2")
        // The platform-wide records.
        const account = yield* platform.workWechats.create({ payload: { wechat_number: "matrix_acct", phone: "13800000001" } })
        const group = yield* platform.workGroups.create({ payload: { name: "矩阵群" } })
        yield* platform.workGroups.addMatchmaker({ params: { id: group.id }, payload: { matchmaker_id: A.matchmaker } })
        yield* platform.workGroups.addWorkWechat({ params: { id: group.id }, payload: { work_wechat_id: account.id } })
        yield* platform.workWechats.associate({
          params: { id: account.id },
          payload: { target_type: "matchmaker", target_id: A.matchmaker }
        })
        yield* platform.imageBlacklist.add({ payload: { items: [{ md5: "0123456789abcdef0123456789abcdef", source: "manual" }] } })
        const blacklistId = (yield* platform.imageBlacklist.list({ query: {} })).list[0]!.id
        // The client's own deliveries (of A's events) and the platform's of B's, for redelivery.
        const ownDelivery = (yield* scoped.client.selfService.listDeliveries({ query: { page_size: 1 } })).list[0]!.id
        const platformDelivery = (yield* platform.selfService.listDeliveries({ query: { page_size: 1 } })).list[0]!.id
        // A's tasks 1 and 2 are the client's own (dispatched by it) to complete and fail.
        for (const task of [A.tasks[1]!, A.tasks[2]!]) yield* scoped.client.followUps.dispatch({ params: { task_id: task } })

        const bIds = idsOf(B)
        const markers = ["乙方", "13920000", "0731-99990002"]
        const g = B.guests
        const ga = A.guests
        const guestBody = (company: number, extra: object = {}) => ({ name: "矩阵新嘉宾", gender: "female", company_id: company, ...extra })
        const cardFields = (fields: Record<string, string>) => () => cardForm(uniquePng(), fields)
        const platformWide = (...calls: ReadonlyArray<Call>): Case => ({
          mine: calls.map((c) => ({ call: c, check: outOfScope })),
          theirs: []
        })
        const acct = `/work-wechats/${account.id}`
        const grp = `/work-groups/${group.id}`

        const cases: Record<string, Case> = {
          // Guests
          "GET /guests": {
            mine: [{ call: get("/guests"), check: served }, { call: get("/guests", `company_id=${a}`), check: served }],
            theirs: [filteredBy(b, (id) => get("/guests", `company_id=${id}`))]
          },
          "POST /guests": {
            mine: [{ call: send("POST", "/guests", guestBody(a)), check: served }],
            theirs: [
              namesB(b, (id) => send("POST", "/guests", guestBody(id as number))),
              hidden(B.matchmaker, (id) => send("POST", "/guests", guestBody(a, { matchmaker_id: id })))
            ]
          },
          "GET /guests/{id}": {
            mine: [{ call: get(`/guests/${ga[0]}`), check: served }],
            theirs: [hidden(g[0], (id) => get(`/guests/${id}`))]
          },
          "PUT /guests/{id}": {
            mine: [{ call: send("PUT", `/guests/${ga[0]}`, { height: 170 }), check: served }],
            theirs: [
              hidden(g[0], (id) => send("PUT", `/guests/${id}`, { height: 171 })),
              namesB(b, (id) => send("PUT", `/guests/${ga[0]}`, { company_id: id })),
              hidden(B.matchmaker, (id) => send("PUT", `/guests/${ga[0]}`, { matchmaker_id: id }))
            ]
          },
          "POST /guests/batch": {
            mine: [{ call: send("POST", "/guests/batch", { guests: [guestBody(a)] }), check: itemsSucceed }],
            theirs: [
              batchItems(b, "out_of_scope", (id) => send("POST", "/guests/batch", { guests: [guestBody(id as number)] })),
              batchItems(
                B.matchmaker,
                "not_found",
                (id) => send("POST", "/guests/batch", { guests: [guestBody(a, { matchmaker_id: id })] })
              )
            ]
          },
          "PUT /guests/batch": {
            mine: [{ call: send("PUT", "/guests/batch", { guests: [{ id: ga[0], height: 172 }] }), check: itemsSucceed }],
            theirs: [
              batchItems(g[0], "not_found", (id) => send("PUT", "/guests/batch", { guests: [{ id, height: 173 }] })),
              batchItems(b, "out_of_scope", (id) => send("PUT", "/guests/batch", { guests: [{ id: ga[0], company_id: id }] })),
              batchItems(B.matchmaker, "not_found", (id) => send("PUT", "/guests/batch", { guests: [{ id: ga[0], matchmaker_id: id }] }))
            ]
          },
          "POST /guests/create-from-card": {
            mine: [{
              call: {
                method: "POST",
                path: "/guests/create-from-card",
                form: cardFields({ company_id: String(a), matchmaker_id: String(A.matchmaker) })
              },
              check: served
            }],
            theirs: [
              namesB(
                b,
                (id) => ({
                  method: "POST",
                  path: "/guests/create-from-card",
                  form: cardFields({ company_id: String(id), matchmaker_id: String(A.matchmaker) })
                })
              ),
              hidden(
                B.matchmaker,
                (id) => ({ method: "POST", path: "/guests/create-from-card", form: cardFields({ matchmaker_id: String(id) }) })
              )
            ]
          },
          "POST /guests/parse-card": {
            mine: [{
              call: { method: "POST", path: "/guests/parse-card", form: cardFields({ matchmaker_id: String(A.matchmaker) }) },
              check: served
            }],
            theirs: [
              hidden(
                B.matchmaker,
                (id) => ({ method: "POST", path: "/guests/parse-card", form: cardFields({ matchmaker_id: String(id) }) })
              )
            ]
          },
          "GET /guests/card-task/{task_id}": {
            mine: [{ call: get(`/guests/card-task/${A.cardTask}`), check: served }],
            theirs: [hidden(B.cardTask, (id) => get(`/guests/card-task/${id}`), UNKNOWN_CARD_TASK)]
          },
          // Matchmakers
          "GET /matchmakers": {
            mine: [{ call: get("/matchmakers"), check: served }],
            theirs: [filteredBy(b, (id) => get("/matchmakers", `company_id=${id}`))]
          },
          "GET /matchmakers/ids": {
            mine: [{ call: get("/matchmakers/ids"), check: served }],
            theirs: [filteredBy(b, (id) => get("/matchmakers/ids", `company_id=${id}`))]
          },
          "GET /matchmakers/{id}": {
            mine: [{ call: get(`/matchmakers/${A.matchmaker}`), check: served }],
            theirs: [hidden(B.matchmaker, (id) => get(`/matchmakers/${id}`))]
          },
          "POST /matchmakers": {
            mine: [
              { call: send("POST", "/matchmakers", { name: "矩阵红娘", company_id: a }), check: served },
              // Without a company_id: the client's only company.
              { call: send("POST", "/matchmakers", { name: "默认公司红娘" }), check: served }
            ],
            theirs: [namesB(b, (id) => send("POST", "/matchmakers", { name: "矩阵红娘", company_id: id }))]
          },
          "PUT /matchmakers/{id}": {
            mine: [{ call: send("PUT", `/matchmakers/${A.matchmaker}`, { intro: "甲" }), check: served }],
            theirs: [
              hidden(B.matchmaker, (id) => send("PUT", `/matchmakers/${id}`, { intro: "x" })),
              namesB(b, (id) => send("PUT", `/matchmakers/${A.matchmaker}`, { company_id: id }))
            ]
          },
          // Companies
          "GET /companies": { mine: [{ call: get("/companies"), check: served }], theirs: [] },
          "GET /companies/{id}": {
            mine: [{ call: get(`/companies/${a}`), check: served }],
            theirs: [hidden(b, (id) => get(`/companies/${id}`))]
          },
          "PUT /companies/{id}": {
            mine: [{ call: send("PUT", `/companies/${a}`, { city: "长沙" }), check: served }],
            theirs: [hidden(b, (id) => send("PUT", `/companies/${id}`, { city: "上海" }))]
          },
          "POST /companies": platformWide(send("POST", "/companies", { name: "丙方婚介" })),
          // Activities
          "GET /activities": {
            mine: [{ call: get("/activities"), check: served }],
            theirs: [filteredBy(b, (id) => get("/activities", `company_id=${id}`))]
          },
          "POST /activities": {
            mine: [{
              call: send("POST", "/activities", {
                title: "甲新活动",
                address: "长沙",
                start_time: wallTime(48),
                end_time: wallTime(50),
                company_id: a
              }),
              check: served
            }],
            theirs: [namesB(
              b,
              (id) =>
                send("POST", "/activities", {
                  title: "x",
                  address: "长沙",
                  start_time: wallTime(48),
                  end_time: wallTime(50),
                  company_id: id
                })
            )]
          },
          "POST /activities/{id}/register": {
            mine: [{ call: send("POST", `/activities/${A.activity}/register`, { guest_id: ga[2] }), check: served }],
            theirs: [
              hidden(B.activity, (id) => send("POST", `/activities/${id}/register`, { guest_id: ga[3] })),
              hidden(g[2], (id) => send("POST", `/activities/${A.activity}/register`, { guest_id: id }))
            ]
          },
          // Follow-up tasks
          "GET /follow-up/tasks": {
            mine: [{ call: get("/follow-up/tasks"), check: served }],
            theirs: [filteredBy(b, (id) => get("/follow-up/tasks", `company_id=${id}`))]
          },
          "GET /follow-up/tasks/{task_id}": {
            mine: [{ call: get(`/follow-up/tasks/${A.tasks[0]}`), check: served }],
            theirs: [hidden(B.tasks[0]!, (id) => get(`/follow-up/tasks/${id}`))]
          },
          "POST /follow-up/tasks/{task_id}/dispatch": {
            mine: [{ call: send("POST", `/follow-up/tasks/${A.tasks[0]}/dispatch`), check: served }],
            theirs: [hidden(B.tasks[0]!, (id) => send("POST", `/follow-up/tasks/${id}/dispatch`))]
          },
          "POST /follow-up/tasks/{task_id}/complete": {
            mine: [{ call: send("POST", `/follow-up/tasks/${A.tasks[1]}/complete`, { matched_guest_id: ga[1] }), check: served }],
            theirs: [hidden(B.tasks[1]!, (id) => send("POST", `/follow-up/tasks/${id}/complete`, {}))]
          },
          "POST /follow-up/tasks/{task_id}/fail": {
            mine: [{ call: send("POST", `/follow-up/tasks/${A.tasks[2]}/fail`, { error_code: "E", error_msg: "矩阵" }), check: served }],
            theirs: [hidden(B.tasks[2]!, (id) => send("POST", `/follow-up/tasks/${id}/fail`, { error_code: "E", error_msg: "x" }))]
          },
          "POST /follow-up/tasks/{task_id}/skip": {
            mine: [{ call: send("POST", `/follow-up/tasks/${A.tasks[3]}/skip`, { reason: "矩阵" }), check: served }],
            theirs: [hidden(B.tasks[3]!, (id) => send("POST", `/follow-up/tasks/${id}/skip`, { reason: "x" }))]
          },
          // Matches
          "GET /matches": {
            mine: [{ call: get("/matches"), check: served }, { call: get("/matches", `guest_id=${ga[0]}`), check: served }],
            theirs: [
              filteredBy(b, (id) => get("/matches", `company_id=${id}`)),
              filteredBy(g[0], (id) => get("/matches", `guest_id=${id}`))
            ]
          },
          "POST /matches": {
            mine: [{ call: send("POST", "/matches", { guest_a_id: ga[2], guest_b_id: ga[3] }), check: served }],
            theirs: [
              hidden(g[2], (id) => send("POST", "/matches", { guest_a_id: id, guest_b_id: g[3] })),
              hidden(g[3], (id) => send("POST", "/matches", { guest_a_id: ga[2], guest_b_id: id }))
            ]
          },
          "PUT /matches/{id}/status": {
            mine: [{ call: send("PUT", `/matches/${A.match}/status`, { status: "pending_date" }), check: served }],
            theirs: [hidden(B.match, (id) => send("PUT", `/matches/${id}/status`, { status: "dating" }))]
          },
          // Memberships
          "GET /memberships": {
            mine: [{ call: get("/memberships"), check: served }],
            theirs: [
              filteredBy(b, (id) => get("/memberships", `company_id=${id}`)),
              filteredBy(B.user, (id) => get("/memberships", `user_id=${id}`))
            ]
          },
          "POST /memberships": {
            mine: [{ call: send("POST", "/memberships", { user_id: A.user, plan_id: 1, guest_id: ga[1] }), check: served }],
            theirs: [hidden(g[1], (id) => send("POST", "/memberships", { user_id: A.user, plan_id: 1, guest_id: id }))]
          },
          // Events and the client's own settings
          "GET /events": {
            mine: [{ call: get("/events"), check: served }],
            theirs: []
          },
          "GET /time": { mine: [{ call: get("/time"), check: served }], theirs: [] },
          "GET /webhook": { mine: [{ call: get("/webhook"), check: served }], theirs: [] },
          "PUT /webhook": { mine: [{ call: send("PUT", "/webhook", webhook), check: served }], theirs: [] },
          "GET /webhook/deliveries": { mine: [{ call: get("/webhook/deliveries"), check: served }], theirs: [] },
          "POST /webhook/deliveries/{id}/redeliver": {
            mine: [{ call: send("POST", `/webhook/deliveries/${ownDelivery}/redeliver`), check: served }],
            theirs: [hidden(platformDelivery, (id) => send("POST", `/webhook/deliveries/${id}/redeliver`))]
          },
          "POST /webhook/redeliver": {
            mine: [{ call: send("POST", "/webhook/redeliver", { since: "2000-01-01 00:00:00", status: "pending" }), check: served }],
            theirs: []
          },
          "POST /webhook/rotate-secret": { mine: [{ call: send("POST", "/webhook/rotate-secret"), check: served }], theirs: [] },
          "POST /webhook/test": { mine: [{ call: send("POST", "/webhook/test"), check: served }], theirs: [] },
          "POST /credentials/rotate": { mine: [{ call: send("POST", "/credentials/rotate"), check: served }], theirs: [], spare: true },
          // Platform-wide: work WeChat accounts, groups, the image blacklist
          "GET /work-wechats": platformWide(get("/work-wechats")),
          "POST /work-wechats": platformWide(send("POST", "/work-wechats", { wechat_number: "matrix_new", phone: "13800000002" })),
          "GET /work-wechats/{id}": platformWide(get(acct)),
          "PUT /work-wechats/{id}": platformWide(send("PUT", acct, { remark: "x" })),
          "DELETE /work-wechats/{id}": platformWide(send("DELETE", acct)),
          "PUT /work-wechats/{id}/status": platformWide({ method: "PUT", path: `${acct}/status`, query: "status=disabled" }),
          "GET /work-wechats/{id}/logs": platformWide(get(`${acct}/logs`)),
          "GET /work-wechats/{id}/associations": platformWide(get(`${acct}/associations`)),
          "POST /work-wechats/{id}/associate": platformWide(
            send("POST", `${acct}/associate`, { target_type: "matchmaker", target_id: A.matchmaker })
          ),
          "POST /work-wechats/{id}/batch-associate": platformWide(
            send("POST", `${acct}/batch-associate`, { target_type: "matchmaker", target_ids: [A.matchmaker] })
          ),
          "POST /work-wechats/{id}/disassociate": platformWide(
            send("POST", `${acct}/disassociate`, { target_type: "matchmaker", target_id: A.matchmaker })
          ),
          "POST /work-wechats/{id}/transfer": platformWide(
            send("POST", `${acct}/transfer`, { target_type: "matchmaker", target_ids: [A.matchmaker], target_work_wechat_id: account.id })
          ),
          "POST /work-wechats/{id}/transfer-admin": platformWide(send("POST", `${acct}/transfer-admin`, { target_admin_id: 1 })),
          "GET /work-groups": platformWide(get("/work-groups")),
          "POST /work-groups": platformWide(send("POST", "/work-groups", { name: "矩阵新群" })),
          "GET /work-groups/{id}": platformWide(get(grp)),
          "PUT /work-groups/{id}": platformWide(send("PUT", grp, { remark: "x" })),
          "DELETE /work-groups/{id}": platformWide(send("DELETE", grp)),
          "PUT /work-groups/{id}/status": platformWide({ method: "PUT", path: `${grp}/status`, query: "status=disabled" }),
          "GET /work-groups/{id}/logs": platformWide(get(`${grp}/logs`)),
          "GET /work-groups/{id}/matchmakers": platformWide(get(`${grp}/matchmakers`)),
          "POST /work-groups/{id}/matchmakers": platformWide(send("POST", `${grp}/matchmakers`, { matchmaker_id: A.matchmaker })),
          "POST /work-groups/{id}/matchmakers/batch": platformWide(
            send("POST", `${grp}/matchmakers/batch`, { matchmaker_ids: [A.matchmaker] })
          ),
          "DELETE /work-groups/{id}/matchmakers/{matchmaker_id}": platformWide(send("DELETE", `${grp}/matchmakers/${A.matchmaker}`)),
          "GET /work-groups/{id}/work-wechats": platformWide(get(`${grp}/work-wechats`)),
          "POST /work-groups/{id}/work-wechats": platformWide(send("POST", `${grp}/work-wechats`, { work_wechat_id: account.id })),
          "POST /work-groups/{id}/work-wechats/batch": platformWide(
            send("POST", `${grp}/work-wechats/batch`, { work_wechat_ids: [account.id] })
          ),
          "DELETE /work-groups/{id}/work-wechats/{work_wechat_id}": platformWide(send("DELETE", `${grp}/work-wechats/${account.id}`)),
          "GET /image-blacklist": platformWide(get("/image-blacklist")),
          "POST /image-blacklist": platformWide(send("POST", "/image-blacklist", { items: [{ md5: "f".repeat(32), source: "manual" }] })),
          "POST /image-blacklist/check": platformWide(send("POST", "/image-blacklist/check", { md5_list: ["f".repeat(32)] })),
          "DELETE /image-blacklist/{record_id}": platformWide(send("DELETE", `/image-blacklist/${blacklistId}`))
        }

        // B's records as the control sees them, to prove at the end that nothing of B changed.
        const bViews = [
          `/guests/${g[0]}`,
          `/guests/${g[2]}`,
          `/matchmakers/${B.matchmaker}`,
          `/companies/${b}`,
          `/follow-up/tasks/${B.tasks[0]}`,
          `/follow-up/tasks/${B.tasks[1]}`,
          `/guests/card-task/${B.cardTask}`
        ].map((path) => get(path)).concat(
          ["/activities", "/matches", "/memberships"].map((path) => get(path, `company_id=${b}&page_size=100`))
        )
        const viewB = Effect.forEach(bViews, (c) => Effect.map(call(baseUrl, platformKey, c), (r) => r.text))
        const before = yield* viewB

        const operations = yield* operationsOf(baseUrl)
        const problems: Array<string> = []
        const withoutCase = operations.map((o) => o.key).filter((key) => !(key in cases))
        expect(withoutCase, "operations of the document without a case in the scope matrix").toEqual([])

        const withPage = (c: Call, pageSize: number | undefined): Call =>
          pageSize === undefined || c.method !== "GET" ? c : { ...c, query: [c.query, `page_size=${pageSize}`].filter(Boolean).join("&") }
        /** What the scoped client got, searched for B's data; a list's total counts only what it lists. */
        const inspect = (where: string, kind: string | undefined, r: RawResponse, named?: number | string) => {
          // A refusal may echo the id the call itself named (403 out_of_scope carries company_id).
          const leaks = leaksIn(r.json, kind, bIds, markers).filter((leak) => r.status === 200 || !leak.endsWith(`=${named}`))
          if (leaks.length > 0) problems.push(`${where}: B's data in the answer: ${[...new Set(leaks)].join(", ")}`)
          const data = r.json.data as { total?: unknown; list?: ReadonlyArray<unknown> } | null
          if (r.status === 200 && typeof data?.total === "number" && Array.isArray(data.list) && data.total !== data.list.length) {
            problems.push(`${where}: total ${data.total} but ${data.list.length} listed (every record fits one page)`)
          }
        }
        const normalized = (r: RawResponse, id: number | string) => `${r.status} ${r.text.split(String(id)).join("#")}`
        const controlReads: Array<{ where: string; call: Call }> = []

        for (const { key, pageSize } of operations) {
          const c = cases[key]!
          const who = c.spare === true ? spare.credentials : scoped.credentials
          const kind = KIND_OF_RESOURCE[key.split(" ")[1]!.split("/")[1]!]
          for (const t of c.theirs) {
            const sent = withPage(t.make(t.id), pageSize)
            const where = `${key} naming B's ${t.id}`
            const r = yield* call(baseUrl, who, sent)
            const wrong = t.check(r)
            if (wrong !== undefined) problems.push(`${where}: ${wrong}`)
            inspect(where, kind, r, t.id)
            if (t.asUnknown) {
              const unknown = t.unknown ?? (typeof t.id === "number" ? UNKNOWN_ID : UNKNOWN_EVENT)
              const u = yield* call(baseUrl, who, withPage(t.make(unknown), pageSize))
              if (normalized(r, t.id) !== normalized(u, unknown)) {
                problems.push(`${where}: answered unlike an unknown id: ${show(r)} vs ${show(u)}`)
              }
            }
            if (sent.method === "GET" && t.check === notFound) controlReads.push({ where, call: sent })
          }
          for (const m of c.mine) {
            const sent = withPage(m.call, pageSize)
            const r = yield* call(baseUrl, who, sent)
            const wrong = m.check(r)
            if (wrong !== undefined) problems.push(`${key} on A's records: ${wrong}`)
            inspect(`${key} on A's records`, kind, r)
          }
        }

        // The events feed to its end and the webhook's deliveries: A's events, none of B's.
        const feedOf = (credentials: Credentials, searched: boolean) =>
          Effect.gen(function*() {
            const events: Array<{ id: string; type: string; data: unknown }> = []
            let after = ""
            for (let page = 0; page < 50; page++) {
              const r = yield* call(baseUrl, credentials, get("/events", `page_size=1000${after}`))
              expect(r.status).toBe(200)
              if (searched) inspect(`GET /events page ${page}`, undefined, r)
              events.push(...r.json.data.list)
              if (r.json.data.list.length === 0 || r.json.data.next_after === null) break
              after = `&after=${r.json.data.next_after}`
            }
            return events
          })
        const everything = yield* feedOf(platformKey, false)
        const eventsOfB = new Set(everything.filter((e) => leaksIn(e, undefined, bIds, markers).length > 0).map((e) => e.id))
        const eventsOfA = new Set(
          everything.filter((e) => leaksIn(e, undefined, idsOf(A), ["甲方"]).length > 0).map((e) => e.id)
        )
        expect(eventsOfB.size, "the control's feed holds B's events").toBeGreaterThan(10)
        const mine = yield* feedOf(scoped.credentials, true)
        /** Every problem is collected, so that one run names every operation that leaks. */
        const fail = (what: string, found: ReadonlyArray<string>) => {
          if (found.length > 0) problems.push(`${what}: ${found.join(", ")}`)
        }
        fail("B's events in the scoped feed", mine.filter((e) => eventsOfB.has(e.id)).map((e) => `${e.type} ${e.id}`))
        expect(mine.filter((e) => eventsOfA.has(e.id)).length, "A's events in the scoped feed").toBeGreaterThan(10)
        // Every scoped event is one of the control's: the feed is the same feed, filtered.
        const allIds = new Set(everything.map((e) => e.id))
        fail("scoped events the control does not see", mine.filter((e) => !allIds.has(e.id)).map((e) => e.type))

        const deliveriesOf = (credentials: Credentials) =>
          Effect.map(
            call(baseUrl, credentials, get("/webhook/deliveries", "page_size=100")),
            (r) => r.json.data.list as ReadonlyArray<{ event_id: string; type: string }>
          )
        const delivered = yield* deliveriesOf(scoped.credentials)
        fail("deliveries of B's events", delivered.filter((d) => eventsOfB.has(d.event_id)).map((d) => d.type))
        expect(delivered.filter((d) => eventsOfA.has(d.event_id)).length, "deliveries of A's events").toBeGreaterThan(10)
        const deliveredToPlatform = yield* deliveriesOf(platformKey)
        expect(deliveredToPlatform.filter((d) => eventsOfB.has(d.event_id)).length, "the control's deliveries of B's events")
          .toBeGreaterThan(0)

        // The control: B's records are served to an unscoped client, and its lists show B's markers.
        for (const { call: c, where } of controlReads) {
          const r = yield* call(baseUrl, platformKey, c)
          if (r.status !== 200) problems.push(`control: ${where}: expected 200 to an unscoped client, got ${show(r)}`)
        }
        for (const path of ["/guests", "/matchmakers", "/activities", "/follow-up/tasks", "/matches", "/memberships", "/companies"]) {
          const r = yield* call(baseUrl, platformKey, get(path, "page_size=100"))
          const kind = KIND_OF_RESOURCE[path.split("/")[1]!]
          if (leaksIn(r.json, kind, bIds, markers).length === 0) problems.push(`control: GET ${path} shows none of B's records`)
        }

        // Nothing of B changed.
        const after = yield* viewB
        fail("B's records changed", bViews.flatMap((c, i) => after[i] === before[i] ? [] : [`${c.path}: ${before[i]} → ${after[i]}`]))
        expect(problems).toEqual([])
      })
  )
})

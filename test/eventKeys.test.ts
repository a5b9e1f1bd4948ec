// A type's payload only ever grows (DECISIONS §12): one run triggers every event type of the
// catalogue and `webhook.test` end to end (the typed client, the operator's commands and the
// daemon's jobs), collects each type's `data` keys from the events feed and from the signed
// deliveries a receiver got, and compares them with the committed snapshot
// test/fixtures/event-keys.json. A key of the snapshot missing from the run fails, naming the type
// and the key; a key the snapshot does not have yet fails too, until it is recorded (and so
// documented: the key lists of docs/events.md are generated from the snapshot and checked here).
//
// EVENT_KEYS_RECORD=1 npx vitest run test/eventKeys.test.ts   records additions (never a removal)
// and rewrites the generated key lists of docs/events.md from the snapshot.
import { readFileSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

import { describe, expect, it, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"

import { moveByTimeOnce } from "../jobs/TimeMoves.js"
import { WebhookJobsLive } from "../jobs/Webhooks.js"
import { runAdmin } from "../src/admin/commands.js"
import { keptKeysOf } from "../src/domain/eventPayloads.js"
import { EVENT_TYPES, isEventType, WEBHOOK_TEST_EVENT } from "../src/domain/eventTypes.js"
import { CardTasksRepo } from "../src/repos/CardTasksRepo.js"
import { CardImport } from "../src/services/CardImport.js"
import { eventually } from "./support/eventually.js"
import { cardForm } from "./support/forms.js"
import { liveAppLayer, serverLayer, signedClient } from "./support/harness.js"
import { makeReceiver, verify } from "./support/receiver.js"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const FIXTURE = path.join(ROOT, "test/fixtures/event-keys.json")
const EVENTS_DOC = path.join(ROOT, "docs/events.md")
const WEBHOOKS_DOC = path.join(ROOT, "docs/webhooks.md")
const RECORD = process.env["EVENT_KEYS_RECORD"] === "1"
const RECORD_COMMAND = "EVENT_KEYS_RECORD=1 npx vitest run test/eventKeys.test.ts"

/** Every type a run must show: the catalogue's, then `webhook.test`. */
const ALL_TYPES: ReadonlyArray<string> = [...EVENT_TYPES, WEBHOOK_TEST_EVENT]

/** type → its `data` keys, sorted. */
type Keys = Record<string, ReadonlyArray<string>>

/** Objects whose keys are the client's own (a task's `extra`): their keys are not the contract's. */
const FREE_FORM = new Set(["extra"])

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)

/**
 * The key paths of a payload's `data`: each top-level key, and each key of a nested object as a
 * dotted path (`result.match_score`; `x[].y` for objects in an array), free-form objects excepted.
 */
const keyPathsOf = (data: Record<string, unknown>, prefix = ""): ReadonlyArray<string> =>
  Object.entries(data).flatMap(([key, value]) => {
    const here = `${prefix}${key}`
    if (FREE_FORM.has(key)) return [here]
    if (isPlainObject(value)) return [here, ...keyPathsOf(value, `${here}.`)]
    if (Array.isArray(value)) return [here, ...value.filter(isPlainObject).flatMap((item) => keyPathsOf(item, `${here}[].`))]
    return [here]
  })

const sortedUnique = (keys: Iterable<string>) => [...new Set(keys)].sort()

/** The snapshot in its canonical form: types in catalogue order, keys sorted, one per line. */
const renderKeys = (keys: Keys): string => {
  const order = (t: string) => (ALL_TYPES.includes(t) ? ALL_TYPES.indexOf(t) : ALL_TYPES.length)
  const types = Object.keys(keys).sort((a, b) => order(a) - order(b) || a.localeCompare(b))
  return `${JSON.stringify(Object.fromEntries(types.map((t) => [t, sortedUnique(keys[t]!)])), null, 2)}\n`
}

const readFixture = (): Keys => JSON.parse(readFileSync(FIXTURE, "utf8")) as Keys

/** What the run lost (a failure whatever happens) and what it added (a failure until recorded). */
const compareKeys = (recorded: Keys, run: Keys) => {
  const removed: Array<string> = []
  const added: Array<string> = []
  for (const [type, keys] of Object.entries(recorded)) {
    const seen = new Set(run[type] ?? [])
    for (const key of keys) {
      if (!seen.has(key)) {
        removed.push(`${type}: "${key}" was in its payload and is gone (a type's payload only ever grows, DECISIONS §12)`)
      }
    }
  }
  for (const [type, keys] of Object.entries(run)) {
    const known = new Set(recorded[type] ?? [])
    for (const key of keys) if (!known.has(key)) added.push(`${type}: "${key}"`)
  }
  return { removed, added }
}

// The generated lists of docs/events.md: one line per type, between these markers.
const START = "<!-- event-keys: generated from test/fixtures/event-keys.json; " + RECORD_COMMAND + " -->"
const END = "<!-- /event-keys -->"

const codeList = (keys: ReadonlyArray<string>) => keys.map((k) => `\`${k}\``).join(", ")

const renderDocsList = (keys: Keys) => Object.entries(keys).map(([type, list]) => `- \`${type}\`: ${codeList(list)}`).join("\n")

/** The generated section of a doc: type → keys, read back from its lines. */
const readDocsList = (doc: string): Keys => {
  const start = doc.indexOf(START)
  const end = doc.indexOf(END)
  if (start < 0 || end < start) return {}
  const lines = doc.slice(start + START.length, end).split("\n").filter((l) => l.startsWith("- "))
  return Object.fromEntries(lines.map((line) => {
    const [type, ...keys] = [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)
    return [type!, keys]
  }))
}

/** The backquoted names in a piece of markdown. */
const codeSpans = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)

/** The backquoted payload keys in a piece of markdown (not paths, formats or event types). */
const keysNamed = (text: string) => codeSpans(text).filter((k) => /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$/.test(k) && !isEventType(k))

const liveLayer = Layer.mergeAll(serverLayer, WebhookJobsLive).pipe(
  Layer.provideMerge(liveAppLayer({ rateLimitBurst: 1_000_000, webhookRetrySchedule: [300, 300], webhookPollSeconds: 1 })),
  Layer.provideMerge(FetchHttpClient.layer),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
)

/** A card image (the test parser reads every card as the same guest). */
const ONE_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

const admin = (...argv: Array<string>) => Effect.orDie(runAdmin(argv))

interface Payload {
  readonly id: string
  readonly type: string
  readonly data: Record<string, unknown>
}

/** Every event of the feed this client may read, from the oldest kept. */
const readFeed = (client: Effect.Success<ReturnType<typeof signedClient>>["client"]) =>
  Effect.gen(function*() {
    const feed: Array<Payload> = []
    let after: string | undefined
    for (;;) {
      const page = yield* client.events.list({ query: { page_size: 1000, ...(after === undefined ? {} : { after }) } })
      feed.push(...page.list)
      if (page.list.length === 0) return feed
      after = page.next_after ?? undefined
    }
  })

layer(liveLayer, { excludeTestServices: true, timeout: 120_000 })("every event type's payload keys", (it) => {
  it.effect("a full run emits every type with every key of the snapshot (a removed key fails, naming its type); new keys must be recorded", () =>
    Effect.gen(function*() {
      const { client, credentials } = yield* signedClient()
      const receiver = yield* makeReceiver
      const hook = yield* client.selfService.updateWebhook({ payload: { url: `${receiver.url}/all`, events: [...EVENT_TYPES] } })
      const secret = "signing_secret" in hook ? hook.signing_secret! : ""

      // Companies, matchmakers, guests (and the matchmaker's counters), a card's guest.
      const company = yield* client.companies.create({ payload: { name: "键名婚介", city: "长沙" } })
      yield* client.companies.update({ params: { id: company.id }, payload: { city: "株洲" } })
      const matchmaker = yield* client.matchmakers.create({ payload: { name: "键名红娘", company_id: company.id, phone: "13900001111" } })
      yield* client.matchmakers.update({ params: { id: matchmaker.id }, payload: { wechat: "hongniang" } })
      const guest = (name: string, gender: "male" | "female") =>
        client.guests.create({ payload: { name, gender, company_id: company.id, matchmaker_id: matchmaker.id, phone: "13800138000" } })
      const a = yield* guest("键名甲", "male")
      const b = yield* guest("键名乙", "female")
      const c = yield* guest("键名丙", "female")
      yield* client.guests.update({ params: { id: a.id }, payload: { age: 31, height: 178 } })
      yield* client.guests.createFromCard({
        payload: cardForm(new Uint8Array(Buffer.from(ONE_PIXEL_PNG, "base64")), { matchmaker_id: String(matchmaker.id) })
      })
      const cards = yield* CardImport
      const task = yield* Effect.orDie((yield* CardTasksRepo).claim("keys-worker", yield* Clock.currentTimeMillis, 60_000))
      expect(yield* Effect.orDie(cards.processTask(Option.getOrThrow(task), "keys-worker"))).toBe("done")

      // Work accounts and groups: created, updated, associations and members, deleted.
      const account = yield* client.workWechats.create({ payload: { wechat_number: "wx_keys_1", phone: "13700001111" } })
      yield* client.workWechats.update({ params: { id: account.id }, payload: { remark: "键名" } })
      const target = { target_type: "matchmaker" as const, target_id: matchmaker.id }
      yield* client.workWechats.associate({ params: { id: account.id }, payload: target })
      yield* client.workWechats.disassociate({ params: { id: account.id }, payload: target })
      yield* client.workWechats.remove({ params: { id: account.id } })
      const group = yield* client.workGroups.create({ payload: { name: "键名群" } })
      yield* client.workGroups.update({ params: { id: group.id }, payload: { remark: "周末" } })
      yield* client.workGroups.addMatchmaker({ params: { id: group.id }, payload: { matchmaker_id: matchmaker.id } })
      yield* client.workGroups.removeMatchmaker({ params: { id: group.id, matchmaker_id: matchmaker.id } })
      yield* client.workGroups.remove({ params: { id: group.id } })

      // An activity: created, approved and opened by the operator, a registration.
      const activity = yield* client.activities.create({
        payload: {
          title: "键名活动",
          address: "长沙",
          start_time: "2030-01-01 10:00:00",
          end_time: "2030-01-01 12:00:00",
          company_id: company.id
        }
      })
      yield* admin("activities", "approve", String(activity.id))
      yield* admin("activities", "open", String(activity.id))
      yield* client.activities.register({ params: { id: activity.id }, payload: { guest_id: b.id, phone: "13600001111" } })

      // Follow-up tasks: created with their plans, dispatched, then completed, failed and skipped.
      const taskOf = Effect.fn(function*(guestId: number) {
        yield* admin("follow-up", "plans", "create", "--guest", String(guestId), "--days", "1", "--type", "recommend")
        const listed = yield* client.followUps.list({ query: { company_id: company.id } })
        const id = listed.list.find((t) => t.guest_id === guestId)!.id
        yield* client.followUps.dispatch({ params: { task_id: id } })
        return id
      })
      const [t1, t2, t3] = [yield* taskOf(a.id), yield* taskOf(b.id), yield* taskOf(c.id)]
      yield* client.followUps.complete({
        params: { task_id: t1 },
        payload: {
          matched_guest_id: b.id,
          match_score: 88,
          share_link: "https://example.test/s/1",
          share_channel: "wechat",
          extra: { k: 1, phone: "13800138000" }
        }
      })
      yield* client.followUps.fail({ params: { task_id: t2 }, payload: { error_code: "E1", error_msg: "no answer" } })
      yield* client.followUps.skip({ params: { task_id: t3 }, payload: { reason: "no candidate today" } })

      // A match and its status.
      const match = yield* client.matches.create({ payload: { guest_a_id: a.id, guest_b_id: b.id } })
      yield* client.matches.updateStatus({ params: { id: match.id }, payload: { status: "pending_date" } })

      // Memberships: created, renewed, cancelled; another expired by the daemon's time moves.
      const user = (yield* admin("users", "create", "--name", "键名会员")) as unknown as { id: number }
      const first = yield* client.memberships.create({ payload: { user_id: user.id, plan_id: 1, guest_id: a.id } })
      yield* client.memberships.create({ payload: { user_id: user.id, plan_id: 1, guest_id: a.id } })
      yield* admin("memberships", "cancel", String(first.id))
      const other = (yield* admin("users", "create", "--name", "键名过期")) as unknown as { id: number }
      const expiring = yield* client.memberships.create({ payload: { user_id: other.id, plan_id: 1 } })
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE memberships SET expire_at = now() - interval '1 minute' WHERE id = ${expiring.id}`
      yield* Effect.orDie(moveByTimeOnce)

      // webhook.test: asked by the client, and sent by the operator's command.
      yield* client.selfService.testWebhook()
      yield* admin("webhooks", "test", credentials.appKey)

      // The feed's payloads, and the deliveries (one per feed event, and the two tests).
      const feed = yield* readFeed(client)
      const received = yield* eventually(
        "a delivery of every event and of both tests",
        Effect.sync(() => receiver.received),
        (r) => r.length >= feed.length + 2
      )
      const delivered = received.map((r) => verify(secret, r) as Payload)
      expect(sortedUnique(delivered.filter((p) => p.type !== WEBHOOK_TEST_EVENT).map((p) => p.id))).toEqual(
        sortedUnique(feed.map((p) => p.id))
      )

      const keysOf = (payloads: ReadonlyArray<Payload>): Keys => {
        const out: Record<string, Set<string>> = {}
        for (const p of payloads) for (const k of keyPathsOf(p.data)) (out[p.type] ??= new Set()).add(k)
        return Object.fromEntries(Object.entries(out).map(([t, s]) => [t, sortedUnique(s)]))
      }
      const fromFeed = keysOf(feed)
      const fromDeliveries = keysOf(delivered)
      // A webhook carries what the feed lists, key for key; a masking client reads the same keys
      // (masking hides values by field name, at any depth, never a key).
      const masked = yield* readFeed((yield* signedClient(undefined, { masking: true })).client)
      const fromMasked = keysOf(masked)
      for (const type of EVENT_TYPES) {
        expect(fromDeliveries[type], type).toEqual(fromFeed[type])
        expect(fromMasked[type], `${type}, masked`).toEqual(fromFeed[type])
      }
      const completed = masked.find((p) => p.type === "follow_up.task_completed")!.data
      expect(completed).toMatchObject({ task_id: t1, completed_by: credentials.appKey, extra: { phone: "138****8000" } })
      expect(completed.result).toMatchObject({ extra: { phone: "138****8000" } })
      // Both webhook.test senders give the same keys.
      const tests = delivered.filter((p) => p.type === WEBHOOK_TEST_EVENT)
      expect(tests).toHaveLength(2)
      expect(sortedUnique(keyPathsOf(tests[0]!.data)), "webhook.test: POST /webhook/test and `webhooks test`").toEqual(
        sortedUnique(keyPathsOf(tests[1]!.data))
      )
      const run = keysOf([...feed, ...delivered])
      expect(Object.keys(run).filter((t) => !ALL_TYPES.includes(t)), "types outside the catalogue").toEqual([])
      expect(ALL_TYPES.filter((t) => run[t] === undefined), "types this run must trigger (add the write to the run)").toEqual([])
      // Each type's kept keys (domain/eventPayloads.ts) are in its payload.
      for (const type of EVENT_TYPES) {
        expect(keptKeysOf(type).filter((k) => !run[type]!.includes(k)), `${type}: kept keys`).toEqual([])
      }

      const recorded = readFixture()
      const { added, removed } = compareKeys(recorded, run)
      if (RECORD && added.length > 0) {
        // Additions only: a key of the snapshot is never dropped from it, even when the run lost it.
        const merged: Record<string, Array<string>> = {}
        for (const [t, keys] of [...Object.entries(recorded), ...Object.entries(run)]) (merged[t] ??= []).push(...keys)
        writeFileSync(FIXTURE, renderKeys(merged))
      }
      expect(removed, "keys the snapshot records that this run's payloads lost").toEqual([])
      if (!RECORD) {
        expect(
          added,
          `new payload keys: record them (${RECORD_COMMAND}), which also lists them in docs/events.md, and say what they mean`
        ).toEqual([])
      }
    }))
})

describe("the snapshot and the docs", () => {
  it("the snapshot is in its canonical form and holds every type of the catalogue and webhook.test", () => {
    const text = readFileSync(FIXTURE, "utf8")
    const keys = JSON.parse(text) as Keys
    expect(renderKeys(keys)).toBe(text)
    expect(Object.keys(keys)).toEqual(ALL_TYPES)
    for (const type of EVENT_TYPES) expect(keys[type], type).toEqual(expect.arrayContaining([...keptKeysOf(type)]))
  })

  it("docs/events.md lists every type's keys exactly as the snapshot records them", () => {
    const keys = readFixture()
    if (RECORD) {
      const doc = readFileSync(EVENTS_DOC, "utf8")
      const start = doc.indexOf(START)
      const end = doc.indexOf(END)
      expect(start >= 0 && end > start, `docs/events.md has the markers ${START} … ${END}`).toBe(true)
      writeFileSync(EVENTS_DOC, `${doc.slice(0, start + START.length)}\n${renderDocsList(keys)}\n${doc.slice(end)}`)
    }
    const documented = readDocsList(readFileSync(EVENTS_DOC, "utf8"))
    expect(Object.keys(documented), "the types docs/events.md lists").toEqual(Object.keys(keys))
    for (const [type, list] of Object.entries(keys)) {
      expect(documented[type], `docs/events.md, ${type} (to regenerate: ${RECORD_COMMAND})`).toEqual(list)
    }
  })

  it("docs/contributor.md gives the command that records new keys", () => {
    expect(readFileSync(path.join(ROOT, "docs/contributor.md"), "utf8")).toContain(`\n${RECORD_COMMAND} `)
  })

  it("docs/events.md names each type's kept keys, and only keys its payload has", () => {
    const keys = readFixture()
    const doc = readFileSync(EVENTS_DOC, "utf8")
    // "  - `type` keeps `a`, `b`: what they mean" (the keys before the colon).
    const kept = doc.split("\n").map((l) => /^ {2}- `([a-z_.]+)` keeps (.*?`):/.exec(l)).filter((m) => m !== null)
    const named = Object.fromEntries(kept.map((m) => [m[1]!, codeSpans(m[2]!)]))
    for (const type of EVENT_TYPES.filter((t) => keptKeysOf(t).length > 0)) {
      expect(named[type], `docs/events.md: the keys ${type} keeps beside the record`).toEqual([...keptKeysOf(type)])
    }
    for (const [type, list] of Object.entries(named)) {
      expect(list.filter((k) => !keys[type]?.includes(k)), `docs/events.md: ${type} names keys its payload lacks`).toEqual([])
    }
  })

  it("docs/webhooks.md's table of types names only keys each payload has, and every key kept beside the record", () => {
    const keys = readFixture()
    const rows = readFileSync(WEBHOOKS_DOC, "utf8").split("\n").filter((l) => /^\| `[a-z_]+\.[a-z_.]+`/.test(l))
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) {
      const cells = row.split("|").slice(1, -1)
      const types = codeSpans(cells[0]!)
      const data = cells[cells.length - 1]!
      const named = keysNamed(data)
      for (const type of types) {
        expect(named.filter((k) => !keys[type]?.includes(k)), `docs/webhooks.md, ${type}: keys its payload lacks`).toEqual([])
        expect(keptKeysOf(type).filter((k) => !named.includes(k)), `docs/webhooks.md, ${type}: kept keys not named`).toEqual([])
        // A payload that is not the record is listed whole.
        if (!data.includes("record")) expect(sortedUnique(named), `docs/webhooks.md, ${type}: its keys`).toEqual(keys[type])
      }
    }
  })
})

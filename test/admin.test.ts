// The operator command line (DECISIONS §3): every clients command, operator-only states, usage
// errors; and the real `npm run admin` process printing one JSON value with exit codes.
import { execFile } from "node:child_process"

import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"

import { ALL_PERMISSIONS } from "../schema/Permissions.js"
import { runAdmin } from "../src/admin/commands.js"
import { InvalidInput } from "../src/domain/errors.js"
import * as Scopes from "../src/domain/scope.js"
import { Clients } from "../src/services/Clients.js"
import { Companies } from "../src/services/Companies.js"
import { Matchmakers } from "../src/services/Matchmakers.js"
import { withDatabase } from "../src/sql/urls.js"
import { FakeDns } from "./fakes/dns.js"
import { withBuildLock } from "./support/buildLock.js"
import { databaseAdminUrl } from "./support/cluster.js"
import { eventually } from "./support/eventually.js"
import { fakeCardParser, sharedTestDatabase, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const run = (...argv: Array<string>) => runAdmin(argv)
const fails = (...argv: Array<string>) =>
  Effect.map(Effect.result(runAdmin(argv)), (r) => (Result.isFailure(r) ? (r.failure as { message: string }).message : "succeeded"))

const shared = sharedTestDatabase()

layer(testServerLayer({}, fakeCardParser, shared.database))("admin command line", (it) => {
  it.effect("clients create prints credentials that sign requests; --permissions all grants every permission", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const created = (yield* run("clients", "create", "--name", "demo", "--permissions", "all")) as unknown as {
        app_key: string
        app_secret: string
      }
      expect(created.app_key).toMatch(/^ak_[0-9a-f]{16}$/)
      expect(created.app_secret).toMatch(/^[0-9a-f]{64}$/)
      const res = yield* rawRequest(baseUrl, {
        path: "/api/open/v1/matchmakers",
        credentials: { appKey: created.app_key, appSecret: created.app_secret }
      })
      expect(res.status).toBe(200)
      const list = (yield* run("clients", "list")) as unknown as Array<{ app_key: string; permissions: Array<string>; masking: boolean }>
      const mine = list.find((c) => c.app_key === created.app_key)!
      expect(mine.permissions.sort()).toEqual([...ALL_PERMISSIONS].sort())
      expect(mine.masking).toBe(false)
      expect(JSON.stringify(list)).not.toContain(created.app_secret)
    }))

  it.effect("secrets are stored encrypted, never in plain text", () =>
    Effect.gen(function*() {
      const created = (yield* run("clients", "create", "--name", "enc", "--permissions", "open:guest:read")) as unknown as {
        app_key: string
        app_secret: string
      }
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ secret_enc: string }>`SELECT secret_enc FROM clients WHERE app_key = ${created.app_key}`
      expect(rows[0]!.secret_enc).toMatch(/^v2:k[0-9a-f]{8}:/)
      expect(rows[0]!.secret_enc).not.toContain(created.app_secret)
    }))

  it.effect("grant and revoke change permissions; masking, disable/enable and rate-limit are shown by list", () =>
    Effect.gen(function*() {
      const { app_key } = (yield* run("clients", "create", "--name", "ops", "--permissions", "open:guest:read")) as unknown as {
        app_key: string
      }
      const granted = (yield* run("clients", "grant", app_key, "open:company:read,open:company:manage")) as unknown as {
        permissions: Array<string>
      }
      expect(granted.permissions).toEqual(["open:company:manage", "open:company:read", "open:guest:read"])
      const revoked = (yield* run("clients", "revoke", app_key, "open:guest:read")) as unknown as { permissions: Array<string> }
      expect(revoked.permissions).toEqual(["open:company:manage", "open:company:read"])
      expect(yield* run("clients", "masking", app_key, "on")).toMatchObject({ masking: true })
      expect(yield* run("clients", "disable", app_key)).toMatchObject({ status: "disabled" })
      expect(yield* run("clients", "enable", app_key)).toMatchObject({ status: "active" })
      expect(yield* run("clients", "rate-limit", app_key, "--rps", "5", "--burst", "10")).toMatchObject({
        rate_limit: { rps: 5, burst: 10, custom: true }
      })
    }))

  it.effect("reset-secret prints the new secret and when the previous one expires", () =>
    Effect.gen(function*() {
      const { app_key, app_secret } = (yield* run("clients", "create", "--name", "rot", "--permissions", "all")) as unknown as {
        app_key: string
        app_secret: string
      }
      const reset = (yield* run("clients", "reset-secret", app_key)) as unknown as {
        app_secret: string
        previous_secret_expires_at: string
      }
      expect(reset.app_secret).not.toBe(app_secret)
      expect(reset.previous_secret_expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
    }))

  it.effect("clients end-grace ends the previous secret's grace at once on every API instance (401 invalid_signature); --webhook also ends the webhook secret's overlap", () =>
    Effect.gen(function*() {
      const first = (yield* TestServer).baseUrl
      const second = Context.get(yield* Layer.build(Layer.fresh(shared.anotherInstance)), TestServer).baseUrl
      const created = (yield* run("clients", "create", "--name", "grace", "--permissions", "all")) as unknown as {
        app_key: string
        app_secret: string
      }
      const old = { appKey: created.app_key, appSecret: created.app_secret }
      const reset = (yield* run("clients", "reset-secret", created.app_key)) as unknown as { app_secret: string }
      const current = { appKey: created.app_key, appSecret: reset.app_secret }
      const outcome = (baseUrl: string, credentials: { appKey: string; appSecret: string }) =>
        Effect.map(
          rawRequest(baseUrl, { path: "/api/open/v1/webhook", credentials }),
          (r) =>
            `${r.status === 200 ? "ok" : `${r.status} ${r.json.data.error}`}${
              r.headers.get("x-secret-deprecated") === "true" ? "+deprecated" : ""
            }`
        )
      const both = (credentials: { appKey: string; appSecret: string }) =>
        Effect.all([outcome(first, credentials), outcome(second, credentials)])
      // Both instances hold the row and accept the old secret, deprecated.
      yield* eventually("both instances in the grace", both(old), (o) => o.join() === "ok+deprecated,ok+deprecated")

      yield* run("clients", "webhook", created.app_key, "--url", "http://127.0.0.1:9/hook", "--events", "guest.created")
      yield* run("clients", "webhook", created.app_key, "--rotate-secret")
      expect(yield* run("clients", "end-grace", created.app_key)).toEqual({
        app_key: created.app_key,
        previous_secret: "ended",
        webhook_previous_secret: "kept"
      })
      yield* eventually(
        "the old secret refused on both instances",
        both(old),
        (o) => o.join() === "401 invalid_signature,401 invalid_signature"
      )
      expect(yield* both(current)).toEqual(["ok", "ok"])
      const listed = (yield* run("clients", "list")) as unknown as Array<{ app_key: string; previous_secret_expires_at: string | null }>
      expect(listed.find((c) => c.app_key === created.app_key)!.previous_secret_expires_at).toBeNull()
      // The webhook secret's overlap was kept; --webhook ends it too (a second end-grace finds no app grace).
      const rotating = (yield* rawRequest(first, { path: "/api/open/v1/webhook", credentials: current })).json.data
      expect(rotating.secret_rotating_until).not.toBeNull()
      expect(yield* run("clients", "end-grace", created.app_key, "--webhook")).toEqual({
        app_key: created.app_key,
        previous_secret: "none",
        webhook_previous_secret: "ended"
      })
      const ended = (yield* rawRequest(first, { path: "/api/open/v1/webhook", credentials: current })).json.data
      expect(ended.secret_rotating_until).toBeNull()
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ prev: string | null; webhook_prev: string | null }>`SELECT prev_secret_enc AS prev,
        webhook_prev_secret_enc AS webhook_prev FROM clients WHERE app_key = ${created.app_key}`
      expect([row!.prev, row!.webhook_prev]).toEqual([null, null])
      expect(yield* fails("clients", "end-grace", "ak_missing")).toMatch(/unknown app_key ak_missing/)
    }))

  it.effect("webhook settings are stored with a whsec_ signing secret; --off and --rotate-secret", () =>
    Effect.gen(function*() {
      const { app_key } = (yield* run("clients", "create", "--name", "hook", "--permissions", "all")) as unknown as { app_key: string }
      // A name must resolve, and only to allowed addresses (loopback is admitted in tests).
      const dns = yield* FakeDns
      dns.set("hooks.example.test", ["127.0.0.1"])
      const on = (yield* run(
        "clients",
        "webhook",
        app_key,
        "--url",
        "https://hooks.example.test/hook",
        "--events",
        "guest.created,guest.card_created"
      )) as unknown as {
        signing_secret: string
        webhook: { enabled: boolean; events: Array<string> }
      }
      expect(on.signing_secret).toMatch(/^whsec_/)
      expect(on.webhook).toMatchObject({ enabled: true, events: ["guest.created", "guest.card_created"] })
      const rotated = (yield* run("clients", "webhook", app_key, "--rotate-secret")) as unknown as { signing_secret: string }
      expect(rotated.signing_secret).not.toBe(on.signing_secret)
      expect(yield* run("clients", "webhook", app_key, "--off")).toMatchObject({ webhook: { enabled: false } })
      expect(yield* fails("clients", "webhook", app_key, "--url", "https://x.test", "--events", "guest.deleted")).toMatch(/events/)
    }))

  it.effect("clients webhook --url refuses a destination outside the public internet and admitted networks (destination_not_allowed, no address); an admitted one is set", () =>
    Effect.gen(function*() {
      const { app_key } = (yield* run("clients", "create", "--name", "egress", "--permissions", "all")) as unknown as { app_key: string }
      const dns = yield* FakeDns
      dns.set("internal.test", ["10.1.2.3"])
      const set = (url: string) => fails("clients", "webhook", app_key, "--url", url, "--events", "guest.created")
      for (
        const url of [
          "http://169.254.169.254/latest/meta-data/",
          "http://[::ffff:10.1.2.3]/",
          "https://internal.test/x",
          "https://nowhere.test/x"
        ]
      ) {
        const message = yield* set(url)
        expect([url, message]).toEqual([url, expect.stringMatching(/^--url: destination_not_allowed: /)])
        expect(message).not.toMatch(/10\.1\.2\.3|169\.254/)
      }
      // This harness admits loopback (WEBHOOK_ALLOWED_NETWORKS), as the embedded quick start does.
      expect(yield* set("http://127.0.0.1:9/hook")).toBe("succeeded")
    }))

  it.effect("companies and matchmakers status and cert-level are set by the operator", () =>
    Effect.gen(function*() {
      const company = yield* Effect.flatMap(Companies, (s) => s.create({ name: "运营婚介" }))
      expect(yield* run("companies", "status", String(company.id), "rejected")).toMatchObject({ status: "rejected" })
      expect(yield* run("companies", "cert-level", String(company.id), "senior")).toMatchObject({ cert_level: "senior" })
      const m = yield* Effect.flatMap(Matchmakers, (s) => s.create(Scopes.all, { name: "运营红娘" }))
      expect(yield* run("matchmakers", "status", String(m.id), "disabled")).toMatchObject({ status: "disabled" })
      expect(yield* run("matchmakers", "cert-level", String(m.id), "junior")).toMatchObject({ cert_level: "junior" })
      expect(yield* fails("matchmakers", "status", String(m.id), "frozen")).toMatch(/STATUS/)
      expect(yield* fails("companies", "status", "999999", "active")).toMatch(/company 999999 not found/)
    }))

  it.effect("bad commands fail with a clear message", () =>
    Effect.gen(function*() {
      expect(yield* fails("clients", "explode")).toMatch(/Unknown subcommand "explode" for "admin clients"/)
      expect(yield* fails("clients")).toMatch(/admin clients: a command is required/)
      expect(yield* fails("clients", "create", "--name", "x")).toMatch(/Missing required flag: --permissions/)
      expect(yield* fails("clients", "create", "--name", "x", "--permissions", "open:nothing")).toMatch(/unknown permission/)
      expect(yield* fails("clients", "disable", "ak_missing")).toMatch(/unknown app_key/)
      expect(yield* fails("clients", "rate-limit", "ak_x", "--rps", "0", "--burst", "1")).toMatch(/--rps/)
      expect(yield* fails("companies", "status", "x1", "active")).toMatch(/<ID>/)
      expect(yield* fails("follow-up", "plans", "create", "--guest", "1", "--days", "0", "--type", "recommend")).toMatch(
        /days must be day numbers/
      )
      // A usage error ends with the help of the command concerned.
      expect(yield* fails("clients", "masking", "ak_x", "maybe")).toMatch(/MODE[\s\S]*USAGE[\s\S]*admin clients masking/)
    }))

  it.effect("a value a service refuses is worded with the flag that gave it; the service names the value, never a flag", () =>
    Effect.gen(function*() {
      const { app_key } = (yield* run("clients", "create", "--name", "flags", "--permissions", "all")) as unknown as { app_key: string }
      expect(yield* fails("clients", "create", "--name", "  ", "--permissions", "all")).toBe("--name: must not be empty")
      expect(yield* fails("clients", "webhook", app_key, "--url", "ftp://x.test/", "--events", "guest.created")).toBe(
        "--url: must be an absolute http(s) URL: ftp://x.test/"
      )
      expect(yield* fails("clients", "webhook", app_key, "--url", "https://x.test/", "--events", "guest.deleted")).toMatch(
        /^--events: must list some of: .*guest\.created.* \(unknown: guest\.deleted\)$/
      )
      expect(yield* fails("membership-plans", "create", "--name", " ", "--days", "7")).toBe("--name: must be 1 to 50 characters")
      expect(yield* fails("membership-plans", "create", "--name", "长卡", "--days", "40000")).toBe(
        "--days: must be a whole number from 1 to 36500"
      )
      expect(yield* fails("users", "create", "--name", " ")).toBe("--name: must not be empty")
      expect(yield* fails("webhooks", "redeliver", "--client", app_key, "--since", "yesterday")).toBe(
        "--since: must be YYYY-MM-DDTHH:MM:SS (platform time), got yesterday"
      )
      // The webhook is off: each command says how to turn it on.
      expect(yield* fails("webhooks", "redeliver", "--client", app_key, "--since", "2024-01-01T00:00:00")).toBe(
        `the webhook of ${app_key} is off; turn it on first (clients webhook ${app_key} --url URL --events ...)`
      )
      expect(yield* fails("webhooks", "test", app_key)).toBe(
        `${app_key} has no webhook URL (clients webhook ${app_key} --url URL --events ...)`
      )

      const refused = yield* Effect.flip(Effect.flatMap(Clients, (c) => c.setRateLimit(app_key, 0, 1.5)))
      expect(refused).toBeInstanceOf(InvalidInput)
      expect((refused as InvalidInput).issues).toEqual([
        { path: "rps", message: "must be > 0" },
        { path: "burst", message: "must be a whole number >= 1" }
      ])
    }))

  it.effect("--help shows the commands; no answer is printed", () =>
    Effect.gen(function*() {
      const help = yield* run("--help")
      expect(help).toMatch(/clients/)
      expect(help).toMatch(/follow-up/)
    }))
})

const exec = (file: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.callback<{ code: number; stdout: string; stderr: string }>((resume) => {
    execFile(file, args, { env: { ...process.env, ...env }, cwd: process.cwd() }, (err, stdout, stderr) => {
      resume(Effect.succeed({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }))
    })
  })

/**
 * `npm run -s admin -- ...`: builds the project, then runs the compiled command line (under the
 * build lock: another test file may be building dist/ at the same time).
 */
const npmAdmin = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.promise(() => withBuildLock(() => Effect.runPromise(exec("npm", ["run", "-s", "admin", "--", ...args], env))))
/** The compiled command line that npmAdmin built, without building again. */
const builtAdmin = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  exec(process.execPath, ["dist/src/admin/main.js", ...args], env)

layer(testServerLayer())("npm run admin", (it) => {
  it.effect(
    "prints one JSON value on stdout and exits 0; a bad command exits non-zero with the reason on stderr",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [{ db }] = yield* sql<{ db: string }>`SELECT current_database() AS db`
        const env = { DATABASE_URL: withDatabase(databaseAdminUrl(), db!), SECRET_KEY: "ab".repeat(32), LOG_LEVEL: "Warning" }
        const ok = yield* npmAdmin(["clients", "create", "--name", "cli", "--permissions", "all"], env)
        expect(ok.code).toBe(0)
        expect(JSON.parse(ok.stdout)).toMatchObject({ app_key: expect.stringMatching(/^ak_/), app_secret: expect.any(String) })
        const bad = yield* builtAdmin(["clients", "nope"], env)
        expect(bad.code).toBe(2)
        expect(bad.stdout).toBe("")
        // Plain text for the operator, not a JSON log line.
        expect(bad.stderr).toMatch(/^Unknown subcommand "nope" for "admin clients"/)
        const help = yield* builtAdmin(["--help"], env)
        expect(help.code).toBe(0)
        expect(help.stdout).toBe("")
        expect(help.stderr).toMatch(/membership-plans/)
        // The admin never migrates: a database without the schema is refused with what to run.
        const fresh = `admin_unmigrated_${process.pid}`
        yield* sql.unsafe(`CREATE DATABASE ${fresh}`)
        const refused = yield* builtAdmin(["clients", "list"], { ...env, DATABASE_URL: withDatabase(databaseAdminUrl(), fresh) })
        yield* sql.unsafe(`DROP DATABASE ${fresh}`)
        expect(refused.code).toBe(1)
        expect(refused.stdout).toBe("")
        expect(refused.stderr).toMatch(/npm run migrate/)
        // A bad setting is named as the API and the daemon name it, not as a schema error.
        const badZone = yield* builtAdmin(["clients", "list"], { ...env, TZ: "Mars/Olympus" })
        expect(badZone.code).toBe(1)
        expect(badZone.stdout).toBe("")
        expect(badZone.stderr).toBe("invalid setting TZ: expected an IANA time zone such as Asia/Shanghai or UTC; got \"Mars/Olympus\"\n")
        const badUrl = yield* builtAdmin(["clients", "list"], { ...env, DATABASE_URL: "mysql://admin:hunter2secret@db.example/app" })
        expect(badUrl.code).toBe(1)
        expect(badUrl.stderr).toBe(
          "invalid setting DATABASE_URL: expected a postgres:// or postgresql:// URL (the value is not shown: it may hold a password)\n"
        )
      }),
    // The first call builds the project (npm run admin runs the compiled code).
    { timeout: 180_000 }
  )
})

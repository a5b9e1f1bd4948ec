// DECISIONS §1 against a real PostgreSQL: every fault of the database or its connections (refused
// connections, a read-only server, lock and statement timeouts) answers 503 service_unavailable
// with Retry-After, never 500, and the service serves again once the database does; a deadlock is
// run again inside the service. Each test changes the settings of this file's own database and
// puts them back in a finalizer.
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import * as TestClock from "effect/testing/TestClock"

import { type TaskQueue, taskRunner } from "../jobs/TaskRunner.js"
import { apiErrorOf, responseOfCause } from "../src/http/errors.js"
import { databaseFaultOf, deadlineExceeded } from "../src/repos/databaseFaults.js"
import {
  CONFLICT_RETRIES,
  DatabaseTimeout,
  databaseUnavailable,
  isDatabaseFaultCause,
  sqlEdge,
  Transaction
} from "../src/repos/sqlHelpers.js"
import { Idempotency } from "../src/services/Idempotency.js"
import { pgClientLayer } from "../src/sql/Sql.js"
import { databaseAdminUrl } from "./support/cluster.js"
import { createCredentials, TestServer, testServerLayer } from "./support/harness.js"
import { type RawOptions, rawRequest } from "./support/raw.js"

const BASE = "/api/open/v1"

/** A client on the server's maintenance database, outside the service's pool, for this test's scope. */
const adminClient = Effect.map(
  Layer.build(Layer.orDie(pgClientLayer(Redacted.make(databaseAdminUrl()), "test-faults-admin"))),
  (context) => Context.get(context, SqlClient.SqlClient)
)

/** Runs `check` until it holds, at most `attempts` times 50 ms apart (a bounded wait on a condition). */
const eventually = <A, E, R>(check: Effect.Effect<A, E, R>, holds: (a: A) => boolean, attempts = 100) =>
  Effect.gen(function*() {
    let last = yield* check
    for (let attempt = 1; attempt < attempts && !holds(last); attempt++) {
      yield* Effect.sleep("50 millis")
      last = yield* check
    }
    return last
  })

layer(testServerLayer(), { timeout: 120_000 })("database faults", (it) => {
  /** The service's database, the admin client, and a way to change the database and end its sessions. */
  const setup = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [{ name }] = yield* sql<{ name: string }>`SELECT current_database() AS name`
    const { baseUrl } = yield* TestServer
    const credentials = yield* createCredentials()
    return { sql, admin: yield* adminClient, name: name!, baseUrl, credentials }
  })

  /** Every session of the database but the caller's ends, so new ones pick up its settings. */
  const terminateSessions = (admin: SqlClient.SqlClient, name: string) =>
    Effect.orDie(admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`)

  /** Sends a request and records its status; a 5xx other than 503 is what must never happen. */
  const send = (baseUrl: string, o: RawOptions, statuses: Array<number>) =>
    Effect.map(rawRequest(baseUrl, o), (res) => {
      statuses.push(res.status)
      return res
    })

  const expectUnavailable = (res: { status: number; headers: Headers; json: { code: number; data: { error: string } } }) => {
    expect(res.status).toBe(503)
    expect(res.json).toMatchObject({ code: 503, data: { error: "service_unavailable" } })
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
  }

  it.effect("a database that refuses new connections (ALLOW_CONNECTIONS false, sessions ended) answers 503 with Retry-After, never 500, and serves again after", () =>
    TestClock.withLive(Effect.gen(function*() {
      const { admin, name, baseUrl, credentials } = yield* setup
      const statuses: Array<number> = []
      const list = { path: `${BASE}/companies`, credentials }
      expect((yield* send(baseUrl, list, statuses)).status).toBe(200)

      const refuse = Effect.andThen(
        Effect.orDie(admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`)),
        terminateSessions(admin, name)
      )
      const allow = Effect.orDie(admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`))
      yield* Effect.acquireUseRelease(refuse, () =>
        Effect.gen(function*() {
          for (let i = 0; i < 6; i++) {
            const res = yield* send(
              baseUrl,
              i % 2 === 0 ? list : { ...list, method: "POST", body: JSON.stringify({ name: `拒绝${i}` }) },
              statuses
            )
            expectUnavailable(res)
          }
        }), () => allow)

      const back = yield* eventually(send(baseUrl, list, statuses), (r) => r.status === 200)
      expect(back.status).toBe(200)
      expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([])
    })))

  /**
   * Runs `body` with a setting of the service's database changed (ALTER DATABASE … SET, the
   * sessions ended so new ones take it, and waited for on the service's own pool), and puts it back.
   */
  type Env = Effect.Success<typeof setup>
  const withSetting = <A, E, R>({ admin, name, sql }: Env, setting: string, value: string, body: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      const shown = Effect.orElseSucceed(
        Effect.map(sql.unsafe<{ v: string }>(`SELECT current_setting('${setting}') AS v`), (r) => r[0]?.v),
        () => undefined
      )
      const change = (to: string | undefined) =>
        Effect.gen(function*() {
          yield* Effect.orDie(
            admin.unsafe(
              to === undefined ? `ALTER DATABASE "${name}" RESET ${setting}` : `ALTER DATABASE "${name}" SET ${setting} = '${to}'`
            )
          )
          const before = yield* shown
          yield* terminateSessions(admin, name)
          // Sessions opened from now on have the new value; wait until the pool is on them.
          const after = yield* eventually(shown, (v) => v !== undefined && v !== before)
          expect(after).not.toBe(before)
        })
      return yield* Effect.acquireUseRelease(change(value), () => body, () => change(undefined))
    })

  /** Holds an ACCESS EXCLUSIVE lock on `table` in a transaction of its own while `body` runs. */
  const whileLocked = <A, E, R>(table: string, body: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(Effect.orDie(sql.withTransaction(Effect.gen(function*() {
        yield* sql.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`)
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      }))))
      yield* Deferred.await(locked)
      return yield* Effect.ensuring(body, Effect.andThen(Deferred.succeed(release, undefined), Fiber.join(holder)))
    })

  /** A read and a write of the locked table: both 503 service_unavailable with Retry-After. */
  const listAndCreateUnavailable = ({ baseUrl, credentials }: Env) =>
    Effect.gen(function*() {
      const statuses: Array<number> = []
      expectUnavailable(yield* send(baseUrl, { path: `${BASE}/companies`, credentials }, statuses))
      expectUnavailable(
        yield* send(
          baseUrl,
          { method: "POST", path: `${BASE}/companies`, body: JSON.stringify({ name: "超时公司" }), credentials },
          statuses
        )
      )
      expect(statuses).toEqual([503, 503])
    })

  const servesAgain = ({ baseUrl, credentials }: Env) =>
    Effect.gen(function*() {
      const statuses: Array<number> = []
      const created = yield* eventually(
        send(baseUrl, { method: "POST", path: `${BASE}/companies`, body: JSON.stringify({ name: "恢复公司" }), credentials }, statuses),
        (r) => r.status === 200 || r.status === 201
      )
      expect([200, 201]).toContain(created.status)
      expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([])
    })

  it.effect("a read-only server (default_transaction_read_only, as after a failover) answers 503 with Retry-After, never 500, and serves again after", () =>
    TestClock.withLive(Effect.gen(function*() {
      const env = yield* setup
      yield* withSetting(env, "default_transaction_read_only", "on", listAndCreateUnavailable(env))
      yield* servesAgain(env)
    })))

  it.effect("a lock timeout (55P03) answers 503 with Retry-After, never 500, and serves again after", () =>
    TestClock.withLive(Effect.gen(function*() {
      const env = yield* setup
      yield* withSetting(env, "lock_timeout", "150ms", whileLocked("companies", listAndCreateUnavailable(env)))
      yield* servesAgain(env)
    })))

  it.effect("a statement timeout (57014) answers 503 with Retry-After, never 500, and serves again after", () =>
    TestClock.withLive(Effect.gen(function*() {
      const env = yield* setup
      yield* withSetting(env, "statement_timeout", "150ms", whileLocked("companies", listAndCreateUnavailable(env)))
      yield* servesAgain(env)
    })))

  it.effect("a keyed POST whose connection dies in its transaction (so its ROLLBACK fails too) answers 503 with Retry-After, not 500", () =>
    TestClock.withLive(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const idempotency = yield* Idempotency
      const { appKey } = yield* createCredentials()
      // The endpoint's statement ends its own session (as a restart or a failover does): the
      // attempt fails, then the ROLLBACK TO SAVEPOINT and the ROLLBACK meet a dead connection.
      const attempt = Effect.as(sqlEdge(sql`SELECT pg_terminate_backend(pg_backend_pid())`), HttpServerResponse.text("created"))
      const answer = yield* idempotency.once({ appKey, key: "dies-mid-transaction", fingerprint: "f" }, attempt, {
        recover: (cause) => responseOfCause(cause, "r-attempt"),
        answerOf: (response) => ({ status: response.status, body: new Uint8Array(), contentType: "application/json" })
      }).pipe(
        Effect.map((attempted) => attempted._tag === "Ran" ? attempted.value : HttpServerResponse.text(attempted._tag, { status: 299 })),
        Effect.catchCause((cause) => responseOfCause(cause, "r-edge"))
      )
      expect(answer.status).toBe(503)
      expect(Number(answer.headers["retry-after"])).toBeGreaterThanOrEqual(1)
      // Nothing was kept under the key: it is free for the retry.
      const kept = yield* Effect.orDie(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'dies-mid-transaction'`
      )
      expect(kept[0]!.n).toBe(0)
    })))

  it.effect("a transaction that loses a deadlock (40P01) is run again inside the service, and both units commit", () =>
    TestClock.withLive(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const tx = yield* Transaction
      yield* Effect.orDie(sql`CREATE TABLE deadlock_probe (id int PRIMARY KEY, n int NOT NULL)`)
      yield* Effect.orDie(sql`INSERT INTO deadlock_probe VALUES (1, 0), (2, 0)`)
      const oneLocked = yield* Deferred.make<void>()
      const twoLocked = yield* Deferred.make<void>()
      let runs = 0
      // Each unit locks its first row, waits until the other holds its own, then wants the other's:
      // PostgreSQL ends one with 40P01; run again, it waits for the winner and commits.
      const unit = (first: number, second: number, mine: Deferred.Deferred<void>, theirs: Deferred.Deferred<void>) =>
        tx.run(Effect.gen(function*() {
          runs++
          yield* sqlEdge(sql`UPDATE deadlock_probe SET n = n + 1 WHERE id = ${first}`)
          yield* Deferred.succeed(mine, undefined)
          yield* Deferred.await(theirs)
          yield* sqlEdge(sql`UPDATE deadlock_probe SET n = n + 1 WHERE id = ${second}`)
        }))
      yield* Effect.all([unit(1, 2, oneLocked, twoLocked), unit(2, 1, twoLocked, oneLocked)], { concurrency: 2 })
      expect(runs).toBe(3)
      const rows = yield* Effect.orDie(sql<{ id: number; n: number }>`SELECT id, n FROM deadlock_probe ORDER BY id`)
      expect(rows).toEqual([{ id: 1, n: 2 }, { id: 2, n: 2 }])
    })))

  it.effect("a conflict that outlasts the retries is a 503, and any other database error is neither retried nor a 503", () =>
    TestClock.withLive(Effect.gen(function*() {
      const tx = yield* Transaction
      const failing = (reason: SqlError.SqlErrorReason) => {
        let runs = 0
        const run = tx.run(Effect.suspend(() => {
          runs++
          return Effect.die(new SqlError.SqlError({ reason }))
        }))
        return Effect.map(Effect.exit(run), (exit) => ({ exit, runs }))
      }
      const cause = Object.assign(new Error("deadlock detected"), { code: "40P01" })
      const deadlock = yield* failing(new SqlError.DeadlockError({ cause, operation: "query" }))
      expect(deadlock.runs).toBe(1 + CONFLICT_RETRIES)
      expect(Exit.isFailure(deadlock.exit)).toBe(true)
      if (Exit.isFailure(deadlock.exit)) expect((yield* apiErrorOf(deadlock.exit.cause, "r1"))._tag).toBe("DatabaseUnavailable")

      const syntax = yield* failing(
        new SqlError.SqlSyntaxError({ cause: Object.assign(new Error("syntax"), { code: "42601" }), operation: "query" })
      )
      expect(syntax.runs).toBe(1)
      if (Exit.isFailure(syntax.exit)) expect((yield* apiErrorOf(syntax.exit.cause, "r2"))._tag).toBe("InternalError")
      expect(Exit.isFailure(syntax.exit)).toBe(true)
    })))

  it.effect("database work past its deadline (DATABASE_TIMEOUT_SECONDS) fails at the deadline as an outage (the typed 503, a fault the daemon gives back), a statement or a whole transaction alike, without waiting for the statement, which is cancelled", () =>
    TestClock.withLive(Effect.gen(function*() {
      const { sql, admin, name } = yield* setup
      const deadline = Duration.millis(300)
      expect(databaseFaultOf(deadlineExceeded(deadline))).toBe("unavailable")
      const units = {
        statement: sqlEdge(sql`SELECT pg_sleep(30)`),
        transaction: Effect.flatMap(Transaction, (tx) => tx.run(sql`SELECT pg_sleep(30)`))
      }
      for (const [unit, work] of Object.entries(units)) {
        const started = performance.now()
        const exit = yield* Effect.exit(Effect.provideService(work, DatabaseTimeout, deadline))
        const ms = performance.now() - started
        expect(ms, unit).toBeGreaterThanOrEqual(290)
        // The answer does not wait for the statement's cancellation (up to 5 s on a silent path).
        expect(ms, unit).toBeLessThan(300 + 1_000)
        expect(Exit.isFailure(exit), unit).toBe(true)
        if (Exit.isFailure(exit)) {
          expect((yield* apiErrorOf(exit.cause, "r"))._tag, unit).toBe("DatabaseUnavailable")
          expect(isDatabaseFaultCause(exit.cause), unit).toBe(true)
        }
      }
      // The statements were cancelled in the background: none still sleeps.
      const sleeping = yield* eventually(
        admin<
          { n: number }
        >`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${name} AND query LIKE 'SELECT pg_sleep%' AND state = 'active'`,
        (rows) => rows[0]!.n === 0
      ).pipe(Effect.orDie)
      expect(sleeping[0]!.n).toBe(0)
    })))

  it.effect("an interruption of the caller interrupts its unit of database work under a deadline and waits for it: the statement is cancelled before the interruption ends", () =>
    TestClock.withLive(Effect.gen(function*() {
      const { sql, admin, name } = yield* setup
      const sleeping = admin<
        { n: number }
      >`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${name} AND query LIKE 'SELECT pg_sleep(31)%' AND state = 'active'`
      const caller = yield* Effect.forkChild(
        Effect.provideService(sqlEdge(sql`SELECT pg_sleep(31)`), DatabaseTimeout, Duration.seconds(60))
      )
      yield* eventually(sleeping, (rows) => rows[0]!.n === 1).pipe(Effect.orDie)
      const started = performance.now()
      yield* Fiber.interrupt(caller)
      expect(performance.now() - started).toBeLessThan(5_000)
      // Not eventually: the interruption has waited for the cancellation.
      expect((yield* Effect.orDie(sleeping))[0]!.n).toBe(0)
    })))

  it.effect("a daemon task that meets a database fault is given back uncounted and done later, once", () =>
    TestClock.withLive(Effect.gen(function*() {
      let pending = true
      let processed = 0
      let released = 0
      let done = 0
      const finished = yield* Deferred.make<void>()
      const queue: TaskQueue<number, never> = {
        name: "fault-probe",
        channel: "fault_probe",
        concurrency: 1,
        pollInterval: "50 millis",
        claim: () =>
          Effect.sync(() => {
            if (!pending) return Option.none()
            pending = false
            return Option.some(1)
          }),
        // The first run meets the database down (the typed 503 of the repository edge).
        process: () =>
          Effect.suspend(() =>
            ++processed === 1
              ? Effect.fail(databaseUnavailable())
              : Effect.andThen(Effect.sync(() => done++), Deferred.succeed(finished, undefined))
          ),
        release: () =>
          Effect.sync(() => {
            pending = true
            released++
          })
      }
      yield* Layer.build(taskRunner(queue))
      yield* Deferred.await(finished).pipe(Effect.timeout("10 seconds"), Effect.orDie)
      expect({ processed, released, done }).toEqual({ processed: 2, released: 1, done: 1 })
    })))
})

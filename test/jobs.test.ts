// The job daemon: nonce pruning by retention, and a clean stop on SIGTERM.
import { spawn } from "node:child_process"

import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import { pruneNoncesOnce } from "../jobs/NoncePrune.js"
import { ReplayRepo } from "../src/repos/ReplayRepo.js"
import { withDatabase } from "../src/sql/urls.js"
import { databaseAdminUrl } from "./support/cluster.js"
import { testAppLayer } from "./support/harness.js"

layer(testAppLayer())("nonce pruning", (it) => {
  it.effect("removes nonces older than the retention window and keeps newer ones", () =>
    Effect.gen(function*() {
      const replay = yield* ReplayRepo
      const now = yield* Clock.currentTimeMillis
      expect(yield* replay.recordNonce("ak_p", "old-nonce-000000001", now - 16 * 60_000, 0)).toBe(true)
      expect(yield* replay.recordNonce("ak_p", "new-nonce-000000001", now - 14 * 60_000, 0)).toBe(true)
      expect(yield* pruneNoncesOnce).toBe(1)
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ nonce: string }>`SELECT nonce FROM request_nonces WHERE app_key = 'ak_p'`
      expect(rows.map((r) => r.nonce)).toEqual(["new-nonce-000000001"])
    }))

  it.effect("a nonce seen longer ago than the retention may be used again", () =>
    Effect.gen(function*() {
      const replay = yield* ReplayRepo
      const now = yield* Clock.currentTimeMillis
      expect(yield* replay.recordNonce("ak_q", "reuse-nonce-0000001", now - 20 * 60_000, 0)).toBe(true)
      expect(yield* replay.recordNonce("ak_q", "reuse-nonce-0000001", now, now - 15 * 60_000)).toBe(true)
      expect(yield* replay.recordNonce("ak_q", "reuse-nonce-0000001", now + 1, now - 15 * 60_000)).toBe(false)
    }))
})

layer(testAppLayer())("daemon process", (it) => {
  it.effect("starts its jobs and exits 0 on SIGTERM", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [{ db }] = yield* sql<{ db: string }>`SELECT current_database() AS db`
      const url = withDatabase(databaseAdminUrl(), db)
      const result = yield* Effect.promise(() =>
        new Promise<{ code: number | null; log: string }>((resolve) => {
          const child = spawn(process.execPath, ["--import", "tsx", "jobs/main.ts"], {
            env: { ...process.env, DATABASE_URL: url, SECRET_KEY: "ab".repeat(32) },
            stdio: ["ignore", "pipe", "pipe"]
          })
          let log = ""
          let signalled = false
          child.stderr.on("data", (chunk: Buffer) => {
            log += chunk.toString()
            if (!signalled && log.includes("job daemon ready")) {
              signalled = true
              child.kill("SIGTERM")
            }
          })
          child.on("exit", (code) => resolve({ code, log }))
        })
      )
      expect(result.code).toBe(0)
      expect(result.log).toContain("job nonce-prune started")
      expect(result.log).toContain("job daemon stopped")
    }), { timeout: 60_000 })
})

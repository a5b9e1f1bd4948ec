// The job daemon: a nonce past its retention may be used again, and a clean stop on SIGTERM.
import { spawn } from "node:child_process"

import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import { ReplayRepo } from "../src/repos/ReplayRepo.js"
import { withDatabase } from "../src/sql/urls.js"
import { databaseAdminUrl } from "./support/cluster.js"
import { nodeArgs } from "./support/entries.js"
import { testAppLayer } from "./support/harness.js"

// Nonces are forgotten by dropping their hour's partition (test/keyRetention.test.ts).
layer(testAppLayer())("nonce retention", (it) => {
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
          const child = spawn(process.execPath, nodeArgs("jobs/main.ts"), {
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
      expect(result.log).toContain("job partitions started")
      expect(result.log).toContain("job daemon stopped")
    }), { timeout: 60_000 })
})

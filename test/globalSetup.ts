// Vitest global setup: the PostgreSQL servers of a test run (TEST_DATABASE_URL, or throwaway embedded
// ones: one per integration worker) and on each a migrated template database that tests copy
// instead of migrating again.
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"

import { escapeIdentifier } from "pg"
import type { TestProject } from "vitest/node"

import { errorMessage } from "../src/domain/text.js"
import { ensureEmbeddedPostgres, findFreePort, makeServerTempDir, stopEmbeddedPostgres, withPgClient } from "../src/sql/embedded.js"
import { migrateDatabase } from "../src/sql/migrateUrl.js"
import { withDatabase } from "../src/sql/urls.js"
import { withBuildLock } from "./support/buildLock.js"

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * Per server, the URL of a database from which databases may be created and dropped: one server
     * per integration worker, so that the test files running at once share no server (no
     * cluster-wide snapshot horizon, lock or activity of one seen by another). A test reads its
     * own with `databaseAdminUrl()` (test/support/cluster.ts).
     */
    databaseAdminUrls: ReadonlyArray<string>
    /** Name of the migrated template database (on every server); per-test copies are named `<templateDatabase>_…`. */
    templateDatabase: string
    /** How a test's database is copied from the template: `STRATEGY FILE_COPY` where the server has it (PostgreSQL 15+). */
    copyStrategy: string
  }
}

const log = (line: string) => {
  process.stderr.write(`${line}\n`)
}

/**
 * The throwaway server trades durability for speed, as it may: it lives for one run and no test
 * crashes it (test/faultMatrix.test.ts crashes a server of its own, with the defaults). Not
 * flushing to disk (fsync), not waiting for the WAL at commit (synchronous_commit) and not
 * writing full pages after a checkpoint (full_page_writes) only matter after a crash of the
 * server or the machine. Never for a server that keeps data.
 */
export const THROWAWAY_SETTINGS = { fsync: "off", synchronous_commit: "off", full_page_writes: "off" } as const

type Servers = { readonly urls: ReadonlyArray<string>; readonly teardown: () => Promise<void> }

const copyFolder = (from: string, to: string) =>
  new Promise<void>((resolve, reject) =>
    // cp -a keeps the owner (the postgres OS user when tests run as root) and the data folder's mode.
    execFile("cp", ["-a", from, to], (error) => (error === null ? resolve() : reject(error)))
  )

/**
 * `count` private servers, each in a fresh temp folder owned by the server's OS user (as root,
 * PostgreSQL runs as the postgres user; its binaries are copied where that user can run them when
 * needed). The first is created and `prepare`d (the template made and migrated); the others are
 * copies of its stopped data folder, so that initdb and the migrations run once.
 */
async function startThrowawayServers(count: number, prepare: (url: string) => Promise<void>): Promise<Servers> {
  const folders: Array<string> = []
  const stops: Array<() => Promise<void>> = []
  const teardown = async () => {
    await Promise.allSettled(stops.map((stop) => stop()))
    await Promise.allSettled(folders.map((folder) => fs.rm(folder, { recursive: true, force: true })))
  }
  const start = async (folder: string) => {
    const server = await ensureEmbeddedPostgres({
      dataDir: path.join(folder, "pg"),
      port: await findFreePort(),
      log: () => {},
      settings: THROWAWAY_SETTINGS
    })
    stops.push(server.stop)
    return server.url
  }
  try {
    folders.push(await makeServerTempDir("mm-test-pg-", (line) => log(line)))
    const first = await start(folders[0]!)
    await prepare(first)
    if (count === 1) return { urls: [first], teardown }
    await stopEmbeddedPostgres(path.join(folders[0]!, "pg"), { log: () => {} })
    stops.length = 0
    for (let i = 1; i < count; i++) {
      const folder = await makeServerTempDir("mm-test-pg-", (line) => log(line))
      folders.push(folder)
      await copyFolder(path.join(folders[0]!, "pg"), path.join(folder, "pg"))
    }
    return { urls: await Promise.all(folders.map(start)), teardown }
  } catch (error) {
    await teardown()
    throw error
  }
}

const causeText = errorMessage

/** A failure of the setup, already told on stderr with its step and hint. */
class SetupFailure extends Error {}

// Vitest reports a failed global setup as "No test files found" followed by the bare error, so the
// error itself says which step failed, why, and what to do about it.
const setupFailure = (step: string, error: unknown, external: boolean): Error => {
  const hint = external
    ? "Hint: check that the server of TEST_DATABASE_URL accepts connections and lets its user create databases."
    : "Hint: to run the tests against an existing PostgreSQL server instead, set " +
      "TEST_DATABASE_URL=postgres://USER@HOST:PORT/postgres (a user that may create databases)."
  const failure = new SetupFailure(`Test setup failed while ${step}: ${causeText(error)}\n${hint}`, { cause: error })
  log(`\n${failure.message}\n(No test could run: that is what vitest's "No test files found" below means.)\n`)
  return failure
}

/**
 * dist/ built (`npm run build`, under the build lock; nothing to do on an up-to-date tree, as in CI,
 * which builds first): the process tests start the compiled entry points (test/support/entries.ts).
 */
const buildDist = () =>
  withBuildLock(() =>
    new Promise<void>((resolve, reject) =>
      execFile("npm", ["run", "-s", "build"], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
        error === null
          ? resolve()
          : reject(new SetupFailure(`Test setup failed while building dist/ (npm run build): ${stdout}${stderr}`, { cause: error })))
    )
  )

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // While the servers start: the build is tsc's work, theirs mostly waits.
  const built = buildDist()
  built.catch(() => {})
  const external = process.env["TEST_DATABASE_URL"]
  const usesExternal = external !== undefined && external !== ""
  const template = `mm_tpl_${randomBytes(6).toString("hex")}`

  // Removes the template and every per-test copy derived from its name.
  const dropDatabases = async (url: string) => {
    await withPgClient(url, async (client) => {
      const found = await client.query<{ datname: string }>(
        "SELECT datname FROM pg_database WHERE left(datname, length($1)) = $1 ORDER BY datname",
        [template]
      )
      for (const row of found.rows) {
        await client.query(`DROP DATABASE IF EXISTS ${escapeIdentifier(row.datname)} WITH (FORCE)`)
      }
    })
  }

  const prepare = async (url: string) => {
    let step = `creating the template database ${template}`
    try {
      await withPgClient(
        url,
        (client) => client.query(`CREATE DATABASE ${escapeIdentifier(template)} ENCODING 'UTF8' TEMPLATE template0`)
      )
      step = `migrating the template database ${template}`
      await migrateDatabase(withDatabase(url, template))
    } catch (error) {
      await dropDatabases(url).catch(() => {})
      throw setupFailure(step, error, usesExternal)
    }
  }

  // One server per integration worker (vitest.config.ts runs one file at a time on a shared
  // TEST_DATABASE_URL server). A throwaway server disappears with its folder; only a shared server
  // needs cleaning.
  const servers: Servers = usesExternal
    ? await prepare(external).then(() => ({ urls: [external], teardown: () => dropDatabases(external) }))
    : await startThrowawayServers(Math.max(1, project.config.maxWorkers), prepare).catch((error: unknown) => {
      throw error instanceof SetupFailure ? error : setupFailure("starting a throwaway embedded PostgreSQL", error, false)
    })

  // FILE_COPY copies the template's files (a checkpoint, cheap without fsync) where the default
  // (WAL_LOG, PostgreSQL 15+) writes every page of the copy to the WAL.
  const version = await withPgClient(
    servers.urls[0]!,
    (client) => client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")
  )
  project.provide("copyStrategy", Number(version.rows[0]?.v ?? "0") >= 150000 ? "STRATEGY FILE_COPY" : "")
  project.provide("databaseAdminUrls", servers.urls)
  project.provide("templateDatabase", template)

  await built.catch(async (error: unknown) => {
    await servers.teardown().catch(() => {})
    log(`\n${errorMessage(error)}\n`)
    throw error
  })
  return servers.teardown
}

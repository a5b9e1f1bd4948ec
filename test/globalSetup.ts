// Vitest global setup: one PostgreSQL server per test run (TEST_DATABASE_URL or a throwaway embedded
// one) and a migrated template database that tests copy instead of migrating again.
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"

import { escapeIdentifier } from "pg"
import type { TestProject } from "vitest/node"

import { errorMessage } from "../src/domain/text.js"
import { ensureEmbeddedPostgres, findFreePort, makeServerTempDir, withPgClient } from "../src/sql/embedded.js"
import { migrateDatabase } from "../src/sql/migrateUrl.js"
import { withDatabase } from "../src/sql/urls.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of a database on the test server from which databases may be created and dropped. */
    databaseAdminUrl: string
    /** Name of the migrated template database; per-test copies are named `<templateDatabase>_…`. */
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

// Starts a private server in a fresh temp folder owned by the server's OS user (as root, PostgreSQL
// runs as the postgres user; its binaries are copied where that user can run them when needed).
async function startThrowawayServer(): Promise<{ url: string; teardown: () => Promise<void> }> {
  const folder = await makeServerTempDir("mm-test-pg-", (line) => log(line))
  const removeFolder = () => fs.rm(folder, { recursive: true, force: true })
  try {
    const server = await ensureEmbeddedPostgres({
      dataDir: path.join(folder, "pg"),
      port: await findFreePort(),
      log: () => {},
      settings: THROWAWAY_SETTINGS
    })
    return {
      url: server.url,
      teardown: async () => {
        try {
          await server.stop()
        } finally {
          await removeFolder()
        }
      }
    }
  } catch (error) {
    await removeFolder()
    throw error
  }
}

const causeText = errorMessage

// Vitest reports a failed global setup as "No test files found" followed by the bare error, so the
// error itself says which step failed, why, and what to do about it.
const setupFailure = (step: string, error: unknown, external: boolean): Error => {
  const hint = external
    ? "Hint: check that the server of TEST_DATABASE_URL accepts connections and lets its user create databases."
    : "Hint: to run the tests against an existing PostgreSQL server instead, set " +
      "TEST_DATABASE_URL=postgres://USER@HOST:PORT/postgres (a user that may create databases)."
  const failure = new Error(`Test setup failed while ${step}: ${causeText(error)}\n${hint}`, { cause: error })
  log(`\n${failure.message}\n(No test could run: that is what vitest's "No test files found" below means.)\n`)
  return failure
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env["TEST_DATABASE_URL"]
  const usesExternal = external !== undefined && external !== ""
  const server = usesExternal
    ? { url: external, teardown: async () => {} }
    : await startThrowawayServer().catch((error: unknown) => {
      throw setupFailure("starting a throwaway embedded PostgreSQL", error, false)
    })

  const template = `mm_tpl_${randomBytes(6).toString("hex")}`

  // Removes the template and every per-test copy derived from its name.
  const dropDatabases = async () => {
    await withPgClient(server.url, async (client) => {
      const found = await client.query<{ datname: string }>(
        "SELECT datname FROM pg_database WHERE left(datname, length($1)) = $1 ORDER BY datname",
        [template]
      )
      for (const row of found.rows) {
        await client.query(`DROP DATABASE IF EXISTS ${escapeIdentifier(row.datname)} WITH (FORCE)`)
      }
    })
  }

  let step = `creating the template database ${template}`
  try {
    await withPgClient(
      server.url,
      (client) => client.query(`CREATE DATABASE ${escapeIdentifier(template)} ENCODING 'UTF8' TEMPLATE template0`)
    )
    step = `migrating the template database ${template}`
    await migrateDatabase(withDatabase(server.url, template))
  } catch (error) {
    await dropDatabases().catch(() => {})
    await server.teardown().catch(() => {})
    throw setupFailure(step, error, usesExternal)
  }

  // FILE_COPY copies the template's files (a checkpoint, cheap without fsync) where the default
  // (WAL_LOG, PostgreSQL 15+) writes every page of the copy to the WAL.
  const version = await withPgClient(
    server.url,
    (client) => client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")
  )
  project.provide("copyStrategy", Number(version.rows[0]?.v ?? "0") >= 150000 ? "STRATEGY FILE_COPY" : "")
  project.provide("databaseAdminUrl", server.url)
  project.provide("templateDatabase", template)

  return async () => {
    // A throwaway server disappears with its folder; only a shared server needs cleaning.
    if (usesExternal) await dropDatabases()
    await server.teardown()
  }
}

// Vitest global setup: one PostgreSQL server per test run (TEST_DATABASE_URL or a throwaway embedded
// one) and a migrated template database that tests copy instead of migrating again.
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { ensureEmbeddedPostgres, findFreePort, withPgClient } from "../src/sql/embedded.js"
import { migrateDatabase } from "../src/sql/migrateUrl.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of a database on the test server from which databases may be created and dropped. */
    databaseAdminUrl: string
    /** Name of the migrated template database; per-test copies are named `<templateDatabase>_…`. */
    templateDatabase: string
  }
}

const log = (line: string) => {
  process.stderr.write(`${line}\n`)
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`

const databaseUrl = (serverUrl: string, database: string): string => {
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  return url.toString()
}

// Starts a private server in a fresh temp folder; the folder belongs to the postgres user because
// the server cannot run as root and mkdtemp makes it private to its creator.
async function startThrowawayServer(): Promise<{ url: string; teardown: () => Promise<void> }> {
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), "mm-test-pg-"))
  const removeFolder = () => fs.rm(folder, { recursive: true, force: true })
  try {
    if (process.getuid?.() === 0) {
      try {
        const uid = Number.parseInt(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }), 10)
        const gid = Number.parseInt(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }), 10)
        await fs.chown(folder, uid, gid)
      } catch {
        // No postgres user yet (ensureEmbeddedPostgres creates it); passing through is all it needs.
        await fs.chmod(folder, 0o711)
      }
    }
    const server = await ensureEmbeddedPostgres({
      dataDir: path.join(folder, "pg"),
      port: await findFreePort(),
      log: () => {}
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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env["TEST_DATABASE_URL"]
  const server =
    external !== undefined && external !== ""
      ? { url: external, teardown: async () => {} }
      : await startThrowawayServer()

  const template = `mm_tpl_${randomBytes(6).toString("hex")}`

  // Removes the template and every per-test copy derived from its name.
  const dropDatabases = async () => {
    await withPgClient(server.url, async (client) => {
      const found = await client.query(
        "SELECT datname FROM pg_database WHERE left(datname, length($1)) = $1 ORDER BY datname",
        [template]
      )
      for (const row of found.rows) {
        await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(String(row["datname"]))} WITH (FORCE)`)
      }
    })
  }

  try {
    await withPgClient(server.url, (client) =>
      client.query(`CREATE DATABASE ${quoteIdent(template)} ENCODING 'UTF8' TEMPLATE template0`)
    )
    await migrateDatabase(databaseUrl(server.url, template))
  } catch (error) {
    log(`globalSetup: preparing template database ${template} failed`)
    await dropDatabases().catch(() => {})
    await server.teardown()
    throw error
  }

  project.provide("databaseAdminUrl", server.url)
  project.provide("templateDatabase", template)

  return async () => {
    // A throwaway server disappears with its folder; only a shared server needs cleaning.
    if (external !== undefined && external !== "") await dropDatabases()
    await server.teardown()
  }
}

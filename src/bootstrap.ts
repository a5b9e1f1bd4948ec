// Resolves DATABASE_URL and SECRET_KEY before any entry point reads its configuration: without
// DATABASE_URL a project-local embedded PostgreSQL is started and a local secret key is kept.
import { randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ensureEmbeddedPostgres, withPgClient } from "./sql/embedded.js"

type Log = (line: string) => void
// stdout is reserved for the JSON that admin commands print.
const defaultLog: Log = (line) => {
  process.stderr.write(line.endsWith("\n") ? line : `${line}\n`)
}

const DEFAULT_EMBEDDED_PORT = 54329
const DATABASE_NAME = "matchmaking"

/** The folder holding package.json, found upwards from this file (works from src/ and from a build). */
export function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(path.join(dir, "package.json"))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`)
    dir = parent
  }
}

/** Where the embedded cluster of this project lives. */
export const embeddedDataDir = (): string => path.join(projectRoot(), ".data", "pg")

const embeddedPort = (): number => {
  const raw = process.env["EMBEDDED_PG_PORT"]
  if (raw === undefined || raw === "") return DEFAULT_EMBEDDED_PORT
  const port = Number(raw)
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`EMBEDDED_PG_PORT is not a port: ${raw}`)
  return port
}

const errorCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

async function ensureDatabase(adminUrl: string, name: string, log: Log): Promise<void> {
  await withPgClient(adminUrl, async (client) => {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])
    if (found.rows.length > 0) return
    log(`bootstrap: creating database ${name}`)
    try {
      await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}" ENCODING 'UTF8' TEMPLATE template0`)
    } catch (error) {
      // Another process bootstrapping at the same moment may have created it first: that shows up as
      // duplicate_database, or as unique_violation on pg_database when both inserts race.
      const code = errorCode(error)
      if (code !== "42P04" && code !== "23505") throw error
      const again = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])
      if (again.rows.length === 0) throw error
    }
  })
}

const SECRET_PATTERN = /^[0-9a-fA-F]{64}$/

async function readSecret(file: string): Promise<string | undefined> {
  let content: string
  try {
    content = await fs.readFile(file, "utf8")
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined
    throw error
  }
  const secret = content.trim()
  // A bad file is reported rather than replaced: data encrypted or signed with it would be lost.
  if (!SECRET_PATTERN.test(secret)) throw new Error(`${file} does not hold a 64-hex-character secret key`)
  return secret
}

async function localSecretKey(file: string, log: Log): Promise<string> {
  const existing = await readSecret(file)
  if (existing !== undefined) return existing
  await fs.mkdir(path.dirname(file), { recursive: true })
  // Written completely under a temporary name, then linked into place; link fails when the file
  // already exists, so of two concurrent generators exactly one wins and both re-read its key.
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`
  await fs.writeFile(temp, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" })
  try {
    await fs.link(temp, file)
    log(`bootstrap: generated a new secret key in ${file}`)
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error
  } finally {
    await fs.rm(temp, { force: true })
  }
  const secret = await readSecret(file)
  if (secret === undefined) throw new Error(`${file} vanished right after it was written`)
  return secret
}

/**
 * Fills in DATABASE_URL and SECRET_KEY in process.env. `embedded` describes the embedded server
 * when one is used; `stop` only stops it when this call started it.
 */
export async function bootstrapEnv(opts?: {
  log?: (line: string) => void
}): Promise<{ embedded: null | { startedHere: boolean; stop: () => Promise<void> } }> {
  const log = opts?.log ?? defaultLog
  // A project-local .env fills in what the environment does not already set.
  const envFile = path.join(projectRoot(), ".env")
  if (existsSync(envFile)) process.loadEnvFile(envFile)
  let embedded: null | { startedHere: boolean; stop: () => Promise<void> } = null

  const databaseUrl = process.env["DATABASE_URL"]
  if (databaseUrl === undefined || databaseUrl === "") {
    const dataRoot = path.join(projectRoot(), ".data")
    // Search permission for others: the postgres user has to pass through to .data/pg.
    await fs.mkdir(dataRoot, { recursive: true, mode: 0o711 })
    const server = await ensureEmbeddedPostgres({ dataDir: embeddedDataDir(), port: embeddedPort(), log })
    embedded = { startedHere: server.startedHere, stop: server.stop }
    try {
      await ensureDatabase(server.url, DATABASE_NAME, log)
    } catch (error) {
      await server.stop()
      throw error
    }
    const url = new URL(server.url)
    url.pathname = `/${DATABASE_NAME}`
    process.env["DATABASE_URL"] = url.toString()
  }

  const secretKey = process.env["SECRET_KEY"]
  if (secretKey === undefined || secretKey === "") {
    if (embedded === null) {
      throw new Error("SECRET_KEY (64 hex characters) is required when DATABASE_URL is set")
    }
    process.env["SECRET_KEY"] = await localSecretKey(path.join(projectRoot(), ".data", "secret_key"), log)
  }

  return { embedded }
}

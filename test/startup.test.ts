// The API and the job daemon refuse a bad or missing setting before anything starts: one JSON line
// on stderr naming the variable, and a non-zero exit. They only read the environment: without
// DATABASE_URL they start no database of their own (that is `npm start`'s preparation).
import { spawn } from "node:child_process"

import { describe, expect, it } from "@effect/vitest"

import { type Entry, nodeArgs } from "./support/entries.js"

// A value of null removes the variable from the environment.
const run = (entry: Entry, env: Record<string, string | null>): Promise<{ code: number | null; stderr: string; stdout: string }> =>
  new Promise((resolve, reject) => {
    // A database that is never reached: the check comes first.
    const merged: Record<string, string | null | undefined> = {
      ...process.env,
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
      SECRET_KEY: "ab".repeat(32),
      ...env
    }
    const child = spawn(process.execPath, nodeArgs(entry), {
      env: Object.fromEntries(Object.entries(merged).flatMap(([name, value]) => (typeof value === "string" ? [[name, value]] : []))),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    let stdout = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stderr, stdout }))
  })

const cases: ReadonlyArray<readonly [Entry, Record<string, string | null>, string, RegExp]> = [
  ["src/main.ts", { PORT: "abc" }, "PORT", /PORT: .*"abc"/],
  ["src/main.ts", { LOG_LEVEL: "verbose" }, "LOG_LEVEL", /LOG_LEVEL: expected one of .*Warning/],
  ["jobs/main.ts", { SECRET_KEY: "not-hex" }, "SECRET_KEY", /SECRET_KEY: expected 64 hexadecimal characters/],
  ["jobs/main.ts", { CARD_AI_TIMEOUT_MS: "soon" }, "CARD_AI_TIMEOUT_MS", /CARD_AI_TIMEOUT_MS: .*"soon"/],
  [
    "src/main.ts",
    { DATABASE_TIMEOUT_SECONDS: "3000000" },
    "DATABASE_TIMEOUT_SECONDS",
    /DATABASE_TIMEOUT_SECONDS: expected .* at most 2147483 \(24 days\); got "3000000"/
  ],
  [
    "jobs/main.ts",
    { NONCE_RETENTION_SECONDS: "300" },
    "NONCE_RETENTION_SECONDS",
    /NONCE_RETENTION_SECONDS: expected at least twice SIGNATURE_WINDOW_SECONDS \(600\).*; got "300"/
  ],
  ["jobs/main.ts", { TZ: "Mars/Olympus" }, "TZ", /TZ: expected an IANA time zone such as Asia\/Shanghai or UTC; got "Mars\/Olympus"/],
  ["src/main.ts", { CARD_OCR_MODEL: "bogus" }, "CARD_OCR_MODEL", /CARD_OCR_MODEL: expected 4\.0\.0_best_int or 4\.0\.0; got "bogus"/],
  [
    "src/main.ts",
    { DATABASE_TIMEOUT_SECONDS: "0" },
    "DATABASE_TIMEOUT_SECONDS",
    /DATABASE_TIMEOUT_SECONDS: expected a number of seconds above 0/
  ],
  [
    "src/main.ts",
    { DATABASE_URL: null },
    "DATABASE_URL",
    /^api cannot start: DATABASE_URL is not set; `npm start` prepares an embedded database, or set it \(see \.env\.example\)$/
  ],
  ["jobs/main.ts", { DATABASE_URL: "" }, "DATABASE_URL", /^jobs cannot start: DATABASE_URL is not set; `npm start`/],
  ["src/main.ts", { SECRET_KEY: null }, "SECRET_KEY", /^api cannot start: SECRET_KEY is not set; `npm start` keeps one/],
  [
    "jobs/main.ts",
    { WEBHOOK_ALLOWED_NETWORKS: "127.0.0.0/8, 10.0.0.1/8" },
    "WEBHOOK_ALLOWED_NETWORKS",
    /WEBHOOK_ALLOWED_NETWORKS: "10\.0\.0\.1\/8" has bits set after its prefix; the network is 10\.0\.0\.0\/8/
  ],
  [
    "src/main.ts",
    { WEBHOOK_ALLOWED_NETWORKS: "localhost" },
    "WEBHOOK_ALLOWED_NETWORKS",
    /WEBHOOK_ALLOWED_NETWORKS: expected .*"localhost"/
  ],
  ["src/main.ts", { DATABASE_POOLER: "pgpool" }, "DATABASE_POOLER", /DATABASE_POOLER: expected one of none, pgbouncer, pgbouncer-prepared/],
  [
    "jobs/main.ts",
    { DATABASE_POOLER: "pgbouncer", DATABASE_DIRECT_URL: null },
    "DATABASE_DIRECT_URL",
    /^jobs cannot start: DATABASE_DIRECT_URL is not set; DATABASE_POOLER=pgbouncer needs the direct address of PostgreSQL/
  ],
  [
    "src/main.ts",
    { DATABASE_IDLE_IN_TRANSACTION_SECONDS: "-1" },
    "DATABASE_IDLE_IN_TRANSACTION_SECONDS",
    /DATABASE_IDLE_IN_TRANSACTION_SECONDS: expected a number of seconds of at least 0/
  ]
]

describe("start-up with an invalid or missing setting", () => {
  it.each(cases)("%s with %j exits 1 with one JSON line naming %s", async (entry, env, setting, message) => {
    const { code, stderr, stdout } = await run(entry, env)
    expect(code).toBe(1)
    expect(stdout).toBe("")
    const lines = stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    const line: unknown = JSON.parse(lines[0]!)
    expect(line).toMatchObject({
      message: expect.stringMatching(message),
      logLevel: "FATAL",
      annotations: { settings: [setting] }
    })
  }, 60_000)
})

describe("start-up with a database URL that is not PostgreSQL's", () => {
  it(
    "DATABASE_URL and DATABASE_DIRECT_URL are postgres:// URLs, refused at once, and a refusal never shows the URL (it may hold a password)",
    async () => {
      for (
        const [entry, env, setting] of [
          ["src/main.ts", { DATABASE_URL: "mysql://admin:hunter2secret@db.example/app" }, "DATABASE_URL"],
          ["jobs/main.ts", { DATABASE_DIRECT_URL: "db.example:5432 user=admin password=hunter2secret" }, "DATABASE_DIRECT_URL"]
        ] as const
      ) {
        const { code, stderr } = await run(entry, env)
        expect(code).toBe(1)
        expect(JSON.parse(stderr.trim())).toMatchObject({
          message: expect.stringMatching(
            new RegExp(
              `cannot start: invalid setting ${setting}: expected a postgres:// or postgresql:// URL \\(the value is not shown: it may hold a password\\)$`
            )
          ),
          annotations: { settings: [setting] }
        })
        expect(stderr).not.toContain("hunter2secret")
      }
    },
    60_000
  )
})

describe("start-up with a bad master key", () => {
  it("a wrong SECRET_KEYS entry is named, and no key, wrong or right, reaches the log", async () => {
    const good = "c0ffee".repeat(10) + "c0ff"
    const { code, stderr } = await run("src/main.ts", { SECRET_KEY: null, SECRET_KEYS: `new:${good}, old:0123456789abcdef` })
    expect(code).toBe(1)
    const line = JSON.parse(stderr.trim())
    expect(line).toMatchObject({
      message: expect.stringMatching(/^api cannot start: invalid setting SECRET_KEYS: entry 2 of 2: expected KID:KEY/),
      annotations: { settings: ["SECRET_KEYS"] }
    })
    expect(stderr).not.toContain(good)
    expect(stderr).not.toContain("0123456789abcdef")
  }, 60_000)
})

describe("what the processes load", () => {
  const loadedBy = (modules: ReadonlyArray<string>): Promise<Array<string>> =>
    new Promise((resolve, reject) => {
      const script = modules.map((m) => `await import(${JSON.stringify(m)})`).join(";")
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "--import", "./test/support/loadedModules.mjs", "--input-type=module", "-e", script],
        { stdio: ["ignore", "pipe", "inherit"] }
      )
      let stdout = ""
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
      child.on("error", reject)
      child.on("close", () => resolve(stdout.split("\n").filter((line) => line.length > 0)))
    })

  it("the API's and the daemon's modules load no package barrel and no bundled docs page (each would stay in memory)", async () => {
    const urls = await loadedBy([
      "./src/Layers.ts",
      "./src/http/Server.ts",
      "./src/logging.ts",
      "./src/observability/shutdown.ts",
      "./src/observability/tracing.ts",
      "./src/observability/daemonProbes.ts",
      "./jobs/Jobs.ts"
    ])
    // The hook sees what the imports resolve: the service's own modules prove it ran.
    expect(urls.some((url) => url.endsWith("/src/http/Server.ts"))).toBe(true)
    const unwanted = urls.filter((url) =>
      /\/node_modules\/(effect|@effect\/[^/]+)\/dist\/(?:[^/]+\/)?index\.js$/.test(url) ||
      /HttpApiSwagger|HttpApiScalar|httpApiScalar|httpApiSwagger/.test(url) ||
      /\/node_modules\/sharp\//.test(url)
    )
    expect(unwanted).toEqual([])
  }, 60_000)

  it("npm run api and npm run jobs run with the Node flags npm start gives its children", async () => {
    const { NODE_FLAGS } = await import("../src/nodeFlags.js")
    const { readFileSync } = await import("node:fs")
    const scripts: Record<string, string> = JSON.parse(readFileSync("package.json", "utf8")).scripts
    for (const [name, entry] of [["api", "dist/src/main.js"], ["jobs", "dist/jobs/main.js"]] as const) {
      expect(scripts[name], name).toBe(["node", ...NODE_FLAGS, entry].join(" "))
    }
  })
})

// The API and the job daemon refuse a bad setting before anything starts: one JSON line on stderr
// naming the variable, and a non-zero exit.
import { spawn } from "node:child_process"

import { describe, expect, it } from "@effect/vitest"

const run = (entry: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", entry], {
      // A database that is never reached: the check comes first.
      env: { ...process.env, DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", SECRET_KEY: "ab".repeat(32), ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    let stdout = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stderr, stdout }))
  })

const cases: ReadonlyArray<readonly [string, Record<string, string>, string, RegExp]> = [
  ["src/main.ts", { PORT: "abc" }, "PORT", /PORT: .*"abc"/],
  ["src/main.ts", { LOG_LEVEL: "verbose" }, "LOG_LEVEL", /LOG_LEVEL: expected one of .*Warning/],
  ["jobs/main.ts", { SECRET_KEY: "not-hex" }, "SECRET_KEY", /SECRET_KEY: expected 64 hexadecimal characters/],
  ["jobs/main.ts", { CARD_AI_TIMEOUT_MS: "soon" }, "CARD_AI_TIMEOUT_MS", /CARD_AI_TIMEOUT_MS: .*"soon"/]
]

describe("start-up with an invalid setting", () => {
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

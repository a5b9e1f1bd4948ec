// LOG_FORMAT and the shape of a line: which values are accepted, a JSON line for a shipper and a
// readable line for a person (both naming the process, the time in the platform zone), the one line
// for a port that cannot be had, and the start-up line's docs URL.
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Formatter from "effect/Formatter"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"

import { docsUrl, nextStepsLine } from "../../src/http/docs.js"
import { logFormatConfig, logSettingsConfig, logStyle, logTimestamp, parseLogFormat, renderLog } from "../../src/logging.js"
import { listenFailureMessage } from "../../src/startup.js"

const read = (value: string) => Effect.runSync(Effect.result(logFormatConfig.parse(ConfigProvider.fromEnv({ env: { LOG_FORMAT: value } }))))

describe("LOG_FORMAT", () => {
  it.each([["", "auto"], ["auto", "auto"], ["JSON", "json"], [" pretty ", "pretty"]] as const)("%j is %s", (raw, format) => {
    expect(parseLogFormat(raw)).toBe(format)
    expect(read(raw)).toEqual(Result.succeed(format))
  })

  it("anything else is refused with the accepted values", () => {
    expect(parseLogFormat("text")).toBeUndefined()
    const result = read("text")
    expect(Result.isFailure(result) && String(result.failure)).toMatch(/auto, json, pretty.*"text"/)
  })
})

const json = { format: "json", colors: false } as const
const pretty = { format: "pretty", colors: false } as const

describe("a log line", () => {
  const record = {
    message: "Listening on http://0.0.0.0:8080",
    level: "INFO",
    timestamp: "2026-11-26T03:40:16.817+08:00",
    process: "api",
    annotations: { source: "api", job: "webhooks", note: "two words" },
    spans: {},
    fiberId: "#7"
  }

  it("times are ISO with the platform zone's offset (TZ, Asia/Shanghai by default)", () => {
    expect(logTimestamp(new Date("2026-11-25T19:40:16.817Z"), "Asia/Shanghai")).toBe("2026-11-26T03:40:16.817+08:00")
    expect(logTimestamp(new Date("2026-07-01T12:00:00.005Z"), "America/New_York")).toBe("2026-07-01T08:00:00.005-04:00")
    expect(logTimestamp(new Date("2026-07-01T12:00:00.000Z"), "UTC")).toBe("2026-07-01T12:00:00.000+00:00")
    expect(logTimestamp(new Date("2026-07-01T12:00:00.000Z"), "Nowhere/Atlantis")).toBe("2026-07-01T12:00:00.000Z")
  })

  it.each([
    ["text and numbers", { ...record, annotations: { request_id: "r-1", status: 200, ms: 3, app_key: null, ok: true } }],
    ["escapes, control characters, non-BMP text", { ...record, message: "引号\"\\\n\u0000\u2028😀", annotations: { path: "/a\tb" } }],
    ["numbers JSON has no word for", { ...record, annotations: { nan: Number.NaN, inf: Infinity, negativeZero: -0, big: 1e21 } }],
    ["undefined values and no spans", { ...record, process: undefined, annotations: { gone: undefined }, spans: undefined }],
    ["a cause", { ...record, level: "ERROR", cause: "Error: boom\n    at x" }],
    ["a masked value (Redacted)", { ...record, annotations: { phone: Redacted.make("13800138000") } }],
    ["an object value", { ...record, annotations: { error: { code: "x", at: [1, 2] } } }],
    ["a bigint", { ...record, annotations: { n: 10n } }],
    ["a message that is not text", { ...record, message: ["two", "parts"] }]
  ])("as JSON with %s: the bytes Formatter.formatJson writes", (_, r) => {
    const line = renderLog(r, json)
    expect(line).toBe(
      Formatter.formatJson({
        message: r.message,
        logLevel: r.level,
        timestamp: r.timestamp,
        process: r.process,
        cause: "cause" in r ? r.cause : undefined,
        annotations: r.annotations,
        spans: r.spans,
        fiberId: r.fiberId
      })
    )
    expect(line).not.toContain("13800138000")
  })

  it("as JSON: the service's fields plus the process that wrote it", () => {
    expect(JSON.parse(renderLog(record, json))).toEqual({
      message: record.message,
      logLevel: "INFO",
      timestamp: record.timestamp,
      process: "api",
      annotations: record.annotations,
      spans: {},
      fiberId: "#7"
    })
  })

  it("pretty: local time with its offset, process, level, message, then the annotations (a source naming the process left out)", () => {
    expect(renderLog(record, pretty)).toBe(
      `2026-11-26 03:40:16.817+08:00 api   INFO  Listening on http://0.0.0.0:8080 job=webhooks note="two words"`
    )
    expect(renderLog({ ...record, level: "ERROR", cause: "Error: boom\n    at x", annotations: {} }, pretty)).toBe(
      "2026-11-26 03:40:16.817+08:00 api   ERROR Listening on http://0.0.0.0:8080\n    Error: boom\n        at x"
    )
  })

  it("pretty in colour: the time and field names dim, a warning yellow, an error red", () => {
    expect(renderLog({ ...record, level: "WARN", annotations: { job: "webhooks" } }, { format: "pretty", colors: true })).toBe(
      "\x1b[2m2026-11-26 03:40:16.817+08:00\x1b[0m api   \x1b[33mWARN \x1b[0m Listening on http://0.0.0.0:8080 \x1b[2mjob=\x1b[0mwebhooks"
    )
    expect(renderLog({ ...record, level: "ERROR", annotations: {} }, { format: "pretty", colors: true })).toContain("\x1b[31mERROR\x1b[0m")
  })
})

describe("the style of the lines", () => {
  const settings = { level: "Info", format: "auto", timeZone: "Asia/Shanghai", noColor: false } as const

  it("auto is pretty on a terminal and JSON elsewhere; colours only on a terminal, never with NO_COLOR or TERM=dumb", () => {
    expect(logStyle(settings, true)).toEqual({ format: "pretty", colors: true, timeZone: "Asia/Shanghai" })
    expect(logStyle(settings, false)).toEqual({ format: "json", colors: false, timeZone: "Asia/Shanghai" })
    expect(logStyle({ ...settings, format: "pretty" }, false)).toMatchObject({ format: "pretty", colors: false })
    expect(logStyle({ ...settings, noColor: true }, true)).toMatchObject({ format: "pretty", colors: false })
  })

  it("NO_COLOR (set to anything) and TERM=dumb turn colours off; TZ names the zone of the times, Asia/Shanghai by default", () => {
    const read = (env: Record<string, string>) => Effect.runSync(logSettingsConfig.parse(ConfigProvider.fromEnv({ env })))
    expect(read({})).toEqual(settings)
    expect(read({ NO_COLOR: "1" }).noColor).toBe(true)
    expect(read({ NO_COLOR: "" }).noColor).toBe(false)
    expect(read({ TERM: "dumb" }).noColor).toBe(true)
    expect(read({ TERM: "xterm-256color" }).noColor).toBe(false)
    expect(read({ TZ: "UTC" }).timeZone).toBe("UTC")
  })

  it("a bad LOG_LEVEL or LOG_FORMAT is read as its default by the logger (the start-up check names it)", () => {
    const read = (env: Record<string, string>) => Effect.runSync(logSettingsConfig.parse(ConfigProvider.fromEnv({ env })))
    expect(read({ LOG_LEVEL: "verbose", LOG_FORMAT: "text" })).toMatchObject({ level: "Info", format: "auto" })
    expect(read({ LOG_LEVEL: "warning", LOG_FORMAT: "json" })).toMatchObject({ level: "Warn", format: "json" })
  })
})

describe("a port that cannot be had", () => {
  const listenError = (code: string, address: string) =>
    Object.assign(new Error(`listen ${code}: ${address}:8080`), { code, syscall: "listen", address, port: 8080 })

  it("is one line naming the address, the problem and the setting", () => {
    const wrapped = Cause.fail({ _tag: "ServeError", cause: listenError("EADDRINUSE", "0.0.0.0") })
    expect(listenFailureMessage("api", "PORT", wrapped)).toBe("api cannot listen on 0.0.0.0:8080: the port is in use (set PORT)")
    expect(listenFailureMessage("jobs", "JOBS_PORT", Cause.die(listenError("EADDRINUSE", "::")))).toBe(
      "jobs cannot listen on [::]:8080: the port is in use (set JOBS_PORT)"
    )
    expect(listenFailureMessage("api", "PORT", Cause.die(listenError("EADDRNOTAVAIL", "10.9.9.9")))).toMatch(/\(set HOST\)$/)
  })

  it("a HOST that does not resolve is named, without a stack trace (the listener looks it up first)", () => {
    const lookup = (code: string) =>
      Object.assign(new Error(`getaddrinfo ${code} no.such.host`), { code, syscall: "getaddrinfo", hostname: "no.such.host" })
    const served = Cause.fail({ _tag: "ServeError", cause: lookup("ENOTFOUND") })
    expect(listenFailureMessage("api", "PORT", served)).toBe("api cannot listen on no.such.host: no such name or address (set HOST)")
    expect(listenFailureMessage("jobs", "JOBS_PORT", Cause.die({ _tag: "ServeError", cause: lookup("EAI_AGAIN") }))).toBe(
      "jobs cannot listen on no.such.host: the name could not be looked up (DNS did not answer) (set HOST)"
    )
    // A lookup that is not the listener's (a database host that does not resolve) is not HOST's.
    expect(listenFailureMessage("api", "PORT", Cause.fail({ _tag: "SqlError", cause: lookup("ENOTFOUND") }))).toBeUndefined()
  })

  it("any other failure is not mistaken for one", () => {
    expect(listenFailureMessage("api", "PORT", Cause.fail(new Error("connect ECONNREFUSED")))).toBeUndefined()
  })
})

describe("the start-up line", () => {
  it("names a docs URL a person can open and the command that creates a client", () => {
    expect(docsUrl("http://0.0.0.0:8080")).toBe("http://localhost:8080/docs")
    expect(docsUrl("http://[::]:8080")).toBe("http://localhost:8080/docs")
    expect(docsUrl("http://127.0.0.1:9000")).toBe("http://127.0.0.1:9000/docs")
    expect(nextStepsLine("http://0.0.0.0:8080")).toBe(
      "API reference: http://localhost:8080/docs · create a client to sign requests with: npm run -s admin -- clients create --name my-app --permissions all"
    )
  })
})

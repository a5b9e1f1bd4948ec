// LOG_FORMAT and the shape of a line: which values are accepted, a JSON line for a shipper and a
// readable line for a person (both naming the process, the time in the platform zone), the one line
// for a port that cannot be had, and the start-up line's docs URL.
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"

import { docsUrl, nextStepsLine } from "../../src/http/docs.js"
import { listenFailureMessage, logFormatConfig, logTimestamp, parseLogFormat, renderLog } from "../../src/logging.js"

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
    const saved = process.env["TZ"]
    try {
      delete process.env["TZ"]
      expect(logTimestamp(new Date("2026-11-25T19:40:16.817Z"))).toBe("2026-11-26T03:40:16.817+08:00")
      process.env["TZ"] = "America/New_York"
      expect(logTimestamp(new Date("2026-07-01T12:00:00.005Z"))).toBe("2026-07-01T08:00:00.005-04:00")
      process.env["TZ"] = "UTC"
      expect(logTimestamp(new Date("2026-07-01T12:00:00.000Z"))).toBe("2026-07-01T12:00:00.000+00:00")
    } finally {
      if (saved === undefined) delete process.env["TZ"]
      else process.env["TZ"] = saved
    }
  })

  it("as JSON: the service's fields plus the process that wrote it", () => {
    expect(JSON.parse(renderLog(record, "json"))).toEqual({
      message: record.message,
      logLevel: "INFO",
      timestamp: record.timestamp,
      process: "api",
      annotations: record.annotations,
      spans: {},
      fiberId: "#7"
    })
  })

  it("pretty: local time, process, level, message, then the annotations (a source naming the process left out)", () => {
    expect(renderLog(record, "pretty")).toBe(
      `2026-11-26 03:40:16.817 api   INFO  Listening on http://0.0.0.0:8080 job=webhooks note="two words"`
    )
    expect(renderLog({ ...record, level: "ERROR", cause: "Error: boom\n    at x", annotations: {} }, "pretty")).toBe(
      "2026-11-26 03:40:16.817 api   ERROR Listening on http://0.0.0.0:8080\n    Error: boom\n        at x"
    )
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

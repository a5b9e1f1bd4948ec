// The wire-corpus driver, in plain Node (node:child_process, node:http, node:crypto and `pg`; nothing
// of the service's code and nothing of `effect`), so that it runs unchanged whatever the service is
// built on: it copies the migrated template database, creates the clients with the admin command
// line, starts the API as a child process, sends every case of the corpus in order, signed as
// DECISIONS §2 says, and returns each answer normalised (./normalise.ts).
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import * as net from "node:net"
import * as path from "node:path"

import { Client as PgClient, escapeIdentifier } from "pg"

import { nodeArgs } from "../support/entries.js"
import { Normaliser } from "./normalise.js"
import { md5Hex, signature } from "./signing.js"

// ---------------------------------------------------------------------------------------------
// What a corpus is made of

/** The clients of a run, by role (see CLIENTS in corpus.ts). */
export type ClientName = string

/** How a request is signed; every field is a deliberate fault, for the 401 cases. */
export interface SignVariant {
  /** Leave these signing headers out. */
  readonly omit?: ReadonlyArray<"x-app-key" | "x-timestamp" | "x-nonce" | "x-signature">
  /** Send these header values instead of the signed ones (a malformed X-Timestamp, X-Nonce). */
  readonly replace?: Readonly<Record<string, string>>
  /** Sign as an app_key the service does not know (with a made-up secret). */
  readonly unknownAppKey?: string
  /** Sign with this secret instead of the client's (invalid_signature). */
  readonly wrongSecret?: string
  /** Sign with the client's previous secret (during its overlap: X-Secret-Deprecated). */
  readonly previousSecret?: boolean
  /** Seconds added to the current time for X-Timestamp. */
  readonly timestampOffset?: number
  /** Send X-Timestamp in milliseconds. */
  readonly timestampMillis?: boolean
  /** This exact nonce (the same nonce twice: nonce_replayed). */
  readonly nonce?: string
  /** Sign these body bytes instead of the ones sent. */
  readonly signedBody?: string
  /** Sign with this as the sorted_query line (a client that did not sort its query). */
  readonly signedQueryLine?: string
}

export interface MultipartPart {
  readonly name: string
  /** A text field's value (templates allowed). */
  readonly value?: string
  /** A file: a path under the project root, or literal bytes. */
  readonly file?: { readonly path: string } | { readonly text: string } | { readonly zeros: number }
  readonly filename?: string
  readonly contentType?: string
}

export interface RequestStep {
  readonly name: string
  readonly method: string
  /** Path and query, as sent; `{{var}}` is replaced by a captured value. */
  readonly path: string
  /** The status this case is meant to show: a run fails when the service answers another. */
  readonly status: number
  /** The signing client (default "full"), or "unsigned": no signing headers at all. */
  readonly as?: ClientName | "unsigned"
  readonly sign?: SignVariant
  /** A JSON body (templates in strings: a string that is exactly `{{var}}` becomes the value). */
  readonly json?: unknown
  /** A body sent as it is, with this Content-Type (none when undefined). */
  readonly raw?: { readonly text: string; readonly contentType?: string }
  readonly multipart?: { readonly parts: ReadonlyArray<MultipartPart>; readonly boundary?: string }
  /** A JSON body of this many bytes (413). */
  readonly bigJson?: number
  /** Further request headers (Idempotency-Key, X-Request-Id). */
  readonly headers?: Readonly<Record<string, string>>
  /** Captures `{{var}}` values from the answer: var → dotted path in the JSON body (`data.list[0].id`). */
  readonly capture?: Readonly<Record<string, string>>
  /** Record only the status and Content-Type (a large page whose bytes are not the contract). */
  readonly statusAndTypeOnly?: boolean
  /**
   * Sends the request, then the same one again `afterMs` later while the first still runs; the two
   * answers are recorded as two entries, the one that ran first (whichever request it was).
   */
  readonly concurrentRepeat?: { readonly afterMs: number; readonly repeatName: string; readonly repeatStatus: number }
}

/** An operator command (`npm run admin -- …`) run as a child process; its JSON output may be captured. */
export interface AdminStep {
  readonly admin: ReadonlyArray<string>
  readonly capture?: Readonly<Record<string, string>>
  /** Runs in the background under this name; `{ wait: name }` waits for it. */
  readonly background?: string
}

export interface WaitStep {
  readonly wait: string
}

export type Step = RequestStep | AdminStep | WaitStep

export interface ClientSpec {
  readonly permissions: string
  readonly masking?: boolean
  /** Reset its secret once: the corpus may then sign with the previous one. */
  readonly resetSecret?: boolean
  /** `clients rate-limit` values. */
  readonly rateLimit?: { readonly rps: number; readonly burst: number }
}

// ---------------------------------------------------------------------------------------------
// What a run records

export interface WireEntry {
  readonly name: string
  readonly request: {
    readonly method: string
    readonly path: string
    readonly as: string
    readonly sign?: SignVariant
    readonly headers?: Readonly<Record<string, string>>
    readonly body?: string
  }
  readonly response: {
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly body?: string
  }
}

/** The response headers that belong to the contract (DECISIONS §1, §2, §10, §11). */
export const RECORDED_HEADERS = [
  "content-type",
  "allow",
  "location",
  "retry-after",
  "idempotent-replayed",
  "x-secret-deprecated",
  "ratelimit-limit",
  "ratelimit-policy",
  "ratelimit-remaining",
  "ratelimit-reset",
  "x-request-id"
] as const

export interface RunOptions {
  /** URL of a database on the test server from which databases may be created and dropped. */
  readonly adminUrl: string
  /** The migrated template database to copy. */
  readonly template: string
  /** The project root (where src/main.ts is). */
  readonly root: string
  readonly clients: Readonly<Record<ClientName, ClientSpec>>
  readonly steps: ReadonlyArray<Step>
  readonly log?: (line: string) => void
}

export interface RunResult {
  readonly entries: ReadonlyArray<WireEntry>
  /** Cases whose status differs from the one they declare. */
  readonly problems: ReadonlyArray<string>
  /** The served OpenAPI document (GET /api/open/v1/openapi.json), parsed. */
  readonly openapi: unknown
  readonly seconds: number
  /** How long each request took, milliseconds (diagnostics; not recorded). */
  readonly timings: ReadonlyArray<{ readonly name: string; readonly ms: number }>
}

// ---------------------------------------------------------------------------------------------
// Processes

/** The SECRET_KEY of the run (the master key the clients' secrets are encrypted under). */
const SECRET_KEY = "ab".repeat(32)

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer().unref().on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no free port"))))
    })
  })

/**
 * The environment of the service's processes: only what a process needs from the parent (PATH,
 * HOME, TMPDIR) and the run's own settings, so that nothing of the caller's environment (an AI key,
 * a rate limit, tracing) changes an answer.
 */
const serviceEnv = (databaseUrl: string): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const name of ["PATH", "HOME", "TMPDIR", "LANG"]) {
    const value = process.env[name]
    if (value !== undefined) env[name] = value
  }
  return {
    ...env,
    DATABASE_URL: databaseUrl,
    SECRET_KEY,
    TZ: "Asia/Shanghai",
    LOG_LEVEL: "Info",
    // A rate the corpus never reaches however fast the machine (the default, 50/s with bursts of 100,
    // would refuse a fast run); the 429 case has a client of its own with its own rate.
    RATE_LIMIT_RPS: "10000",
    RATE_LIMIT_BURST: "10000",
    // The API parses cards by OCR in this run (no AI key): one worker is enough, and cheaper.
    CARD_OCR_POOL_SIZE: "1",
    // The corpus sets a webhook on loopback (nothing is delivered: no daemon runs).
    WEBHOOK_ALLOWED_NETWORKS: "127.0.0.0/8"
  }
}

/** Runs the compiled `src/admin/main.ts ARGS…` (test/support/entries.ts); resolves with its JSON output. */
const runAdmin = (root: string, env: Record<string, string>, args: ReadonlyArray<string>): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs("src/admin/main.ts", ...args), {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stdout.on("data", (c: Buffer) => (out += c.toString()))
    child.stderr.on("data", (c: Buffer) => (err += c.toString()))
    child.on("error", reject)
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`admin ${args.join(" ")} exited ${code}: ${err.slice(-2000)}`))
      try {
        resolve(JSON.parse(out))
      } catch {
        reject(new Error(`admin ${args.join(" ")} printed no JSON: ${out.slice(0, 500)}`))
      }
    })
  })

interface Api {
  readonly port: number
  readonly child: ChildProcess
  readonly log: () => string
  readonly stop: () => Promise<void>
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
/** A wait that does not keep the process alive. */
const idle = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

/**
 * Starts the compiled `src/main.ts` on a free port; ready once GET /healthz answers 200 (the
 * probe, not a log line, so that a change of logging does not matter).
 */
const startApi = async (root: string, env: Record<string, string>): Promise<Api> => {
  const port = await freePort()
  const child = spawn(process.execPath, nodeArgs("src/main.ts"), {
    cwd: root,
    env: { ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let log = ""
  child.stderr!.on("data", (c: Buffer) => {
    log = (log + c.toString()).slice(-200_000)
  })
  let exited = false
  // If this process ends first (a crash, a killed test run), the API goes with it.
  const orphan = () => child.kill("SIGKILL")
  process.on("exit", orphan)
  const exit = new Promise<void>((resolve) =>
    child.on("exit", () => {
      exited = true
      process.off("exit", orphan)
      resolve()
    })
  )
  const stop = async () => {
    if (exited) return
    child.kill("SIGTERM")
    await Promise.race([exit, idle(10_000)])
    if (!exited) {
      child.kill("SIGKILL")
      await exit
    }
  }
  const deadline = Date.now() + 300_000
  for (;;) {
    if (exited) throw new Error(`the API exited before it was ready:\n${log.slice(-3000)}`)
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`the API was not ready within 300 s:\n${log.slice(-3000)}`)
    }
    const ok = await new Promise<boolean>((resolve) => {
      const req = httpRequest({ host: "127.0.0.1", port, path: "/healthz", agent: false }, (res) => {
        res.resume()
        res.on("end", () => resolve(res.statusCode === 200))
      })
      req.on("error", () => resolve(false))
      req.end()
    })
    if (ok) return { port, child, log: () => log, stop }
    await sleep(150)
  }
}

// ---------------------------------------------------------------------------------------------
// Requests

interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
}

const send = (port: number, method: string, target: string, headers: Record<string, string>, body: Buffer): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path: target, headers, agent: false }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const h: Record<string, string> = {}
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(", ") : v
        resolve({ status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks) })
      })
      res.on("error", reject)
    })
    req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${target}: no answer within 60 s`)))
    req.on("error", reject)
    req.end(body)
  })

const TEMPLATE = /\{\{([A-Za-z0-9_]+)\}\}/g

const lookup = (vars: ReadonlyMap<string, unknown>, name: string): unknown => {
  if (!vars.has(name)) throw new Error(`{{${name}}} was not captured by an earlier step`)
  return vars.get(name)
}

const fill = (text: string, vars: ReadonlyMap<string, unknown>): string =>
  text.replace(TEMPLATE, (_m, name: string) => String(lookup(vars, name)))

const fillJson = (value: unknown, vars: ReadonlyMap<string, unknown>): unknown => {
  if (typeof value === "string") {
    const whole = /^\{\{([A-Za-z0-9_]+)\}\}$/.exec(value)
    return whole !== null ? lookup(vars, whole[1]!) : fill(value, vars)
  }
  if (Array.isArray(value)) return value.map((v) => fillJson(v, vars))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillJson(v, vars)]))
  }
  return value
}

/** `data.list[0].id` of a parsed body. */
const pick = (value: unknown, dotted: string): unknown => {
  let current = value
  for (const part of dotted.split(".")) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part)
    if (m === null) return undefined
    if (m[1] !== "") current = (current as Record<string, unknown> | undefined)?.[m[1]!]
    for (const index of m[2]!.matchAll(/\[(\d+)\]/g)) current = (current as Array<unknown> | undefined)?.[Number(index[1])]
  }
  return current
}

const DEFAULT_BOUNDARY = "----wire-corpus-boundary-7d3f9a"

const multipartBody = (root: string, parts: ReadonlyArray<MultipartPart>, boundary: string, vars: ReadonlyMap<string, unknown>) => {
  const chunks: Array<Buffer> = []
  for (const part of parts) {
    let disposition = `form-data; name="${part.name}"`
    if (part.filename !== undefined) disposition += `; filename="${part.filename}"`
    let head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n`
    if (part.contentType !== undefined) head += `Content-Type: ${part.contentType}\r\n`
    chunks.push(Buffer.from(`${head}\r\n`))
    const file = part.file
    if (file === undefined) chunks.push(Buffer.from(fill(part.value ?? "", vars)))
    else if ("path" in file) chunks.push(readFileSync(path.join(root, file.path)))
    else if ("text" in file) chunks.push(Buffer.from(file.text))
    else chunks.push(Buffer.alloc(file.zeros))
    chunks.push(Buffer.from("\r\n"))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(chunks)
}

/**
 * What the fixture shows of a request body: the text when short; for a form, its parts (a file by
 * where it came from), then the size and MD5 of the whole; else the size and MD5.
 */
const bodySummary = (step: RequestStep, body: Buffer, vars: ReadonlyMap<string, unknown>): string | undefined => {
  if (body.length === 0) return undefined
  const digest = `${body.length} bytes, md5 ${md5Hex(body)}`
  if (step.multipart !== undefined) {
    const parts = step.multipart.parts.map((part) => {
      const file = part.file
      if (file === undefined) return `${part.name}=${fill(part.value ?? "", vars)}`
      const source = "path" in file ? file.path : "text" in file ? JSON.stringify(file.text) : `${file.zeros} zero bytes`
      return `${part.name}=@${part.filename ?? ""} (${part.contentType ?? "no type"}: ${source})`
    })
    return `<multipart/form-data; boundary=${step.multipart.boundary ?? DEFAULT_BOUNDARY}: ${parts.join(", ")}; ${digest}>`
  }
  const text = body.toString("utf8")
  if (body.length <= 4096 && Buffer.from(text, "utf8").equals(body)) return text
  return `<${digest}>`
}

interface Raw {
  readonly step: RequestStep
  readonly name: string
  readonly as: string
  readonly target: string
  readonly sentHeaders: Readonly<Record<string, string>>
  readonly body: Buffer
  /** The body as the fixture shows it (see bodySummary). */
  readonly summary: string | undefined
  readonly answer: Answer
  readonly ms: number
}

// ---------------------------------------------------------------------------------------------
// The run

export const runWireCorpus = async (options: RunOptions): Promise<RunResult> => {
  const log = options.log ?? (() => {})
  const started = Date.now()
  const database = `${options.template}_wire_${randomBytes(4).toString("hex")}`
  const adminDb = new PgClient({ connectionString: options.adminUrl })
  adminDb.on("error", () => {})
  await adminDb.connect()
  await adminDb.query(`CREATE DATABASE ${escapeIdentifier(database)} TEMPLATE ${escapeIdentifier(options.template)}`)
  const url = new URL(options.adminUrl)
  url.pathname = `/${database}`
  const env = serviceEnv(url.toString())
  let api: Api | undefined
  let apiStarting: Promise<Api> | undefined
  try {
    // The clients (and whatever each needs done to it) while the API starts.
    const clients = new Map<ClientName, { appKey: string; appSecret: string; previousSecret?: string }>()
    apiStarting = startApi(options.root, env)
    apiStarting.catch(() => {})
    await Promise.all(
      Object.entries(options.clients).map(async ([name, spec]) => {
        const created = await runAdmin(options.root, env, [
          "clients",
          "create",
          "--name",
          `wire-${name}`,
          "--permissions",
          spec.permissions,
          ...(spec.masking === true ? ["--masking"] : [])
        ]) as { app_key: string; app_secret: string }
        const client: { appKey: string; appSecret: string; previousSecret?: string } = {
          appKey: created.app_key,
          appSecret: created.app_secret
        }
        if (spec.resetSecret === true) {
          const reset = await runAdmin(options.root, env, ["clients", "reset-secret", created.app_key]) as { app_secret: string }
          client.previousSecret = client.appSecret
          client.appSecret = reset.app_secret
        }
        if (spec.rateLimit !== undefined) {
          await runAdmin(options.root, env, [
            "clients",
            "rate-limit",
            created.app_key,
            "--rps",
            String(spec.rateLimit.rps),
            "--burst",
            String(spec.rateLimit.burst)
          ])
        }
        clients.set(name, client)
      })
    )
    api = await apiStarting
    log(`wire corpus: clients made and API ready after ${((Date.now() - started) / 1000).toFixed(1)} s`)
    const port = api.port

    const vars = new Map<string, unknown>()
    for (const [name, c] of clients) vars.set(`app_key_${name}`, c.appKey)
    const background = new Map<string, Promise<void>>()
    const raws: Array<Raw> = []
    const problems: Array<string> = []
    const noncesByName = new Map<string, number>()

    const capture = (spec: Readonly<Record<string, string>> | undefined, value: unknown, what: string) => {
      for (const [name, dotted] of Object.entries(spec ?? {})) {
        const v = pick(value, dotted)
        if (v === undefined) throw new Error(`${what}: nothing at ${dotted} to capture as {{${name}}}`)
        vars.set(name, v)
      }
    }

    const prepare = (step: RequestStep) => {
      const target = fill(step.path, vars)
      let body = Buffer.alloc(0)
      let contentType: string | undefined
      if (step.json !== undefined) {
        body = Buffer.from(JSON.stringify(fillJson(step.json, vars)))
        contentType = "application/json"
      } else if (step.raw !== undefined) {
        body = Buffer.from(fill(step.raw.text, vars))
        contentType = step.raw.contentType
      } else if (step.multipart !== undefined) {
        const boundary = step.multipart.boundary ?? DEFAULT_BOUNDARY
        body = multipartBody(options.root, step.multipart.parts, boundary, vars)
        contentType = `multipart/form-data; boundary=${boundary}`
      } else if (step.bigJson !== undefined) {
        body = Buffer.from(`{"name":"${"x".repeat(step.bigJson)}"}`)
        contentType = "application/json"
      }
      const extra: Record<string, string> = {}
      for (const [k, v] of Object.entries(step.headers ?? {})) extra[k.toLowerCase()] = fill(v, vars)
      return { target, body, contentType, extra }
    }

    const signedHeaders = (step: RequestStep, name: string, target: string, body: Buffer): Record<string, string> => {
      const as = step.as ?? "full"
      if (as === "unsigned") return {}
      const client = clients.get(as)
      if (client === undefined) throw new Error(`${step.name}: no client ${as}`)
      const v = step.sign ?? {}
      const appKey = v.unknownAppKey ?? client.appKey
      const secret = v.wrongSecret ?? (v.unknownAppKey !== undefined
        ? "0".repeat(64)
        : v.previousSecret === true
        ? client.previousSecret ?? ""
        : client.appSecret)
      const now = Math.floor(Date.now() / 1000) + (v.timestampOffset ?? 0)
      const timestamp = v.timestampMillis === true ? String(now * 1000) : String(now)
      // A nonce of the case's own (its name, and how many requests it sent before), not a running
      // count: adding a case does not change the nonce, so the string_to_sign, of the others.
      const sent = noncesByName.get(name) ?? 0
      noncesByName.set(name, sent + 1)
      const nonce = v.nonce ?? `wire-${md5Hex(Buffer.from(name)).slice(0, 20)}-${sent}`
      const q = target.indexOf("?")
      const headers: Record<string, string> = {
        "x-app-key": appKey,
        "x-timestamp": timestamp,
        "x-nonce": nonce,
        "x-signature": signature(secret, {
          method: step.method,
          path: q === -1 ? target : target.slice(0, q),
          rawQuery: q === -1 ? "" : target.slice(q + 1),
          appKey,
          timestamp,
          nonce,
          body: v.signedBody !== undefined ? Buffer.from(v.signedBody) : body,
          ...(v.signedQueryLine !== undefined ? { sortedQueryLine: v.signedQueryLine } : {})
        })
      }
      for (const h of v.omit ?? []) delete headers[h]
      for (const [k, value] of Object.entries(v.replace ?? {})) headers[k.toLowerCase()] = value
      return headers
    }

    const sendStep = async (step: RequestStep, name: string) => {
      const { target, body, contentType, extra } = prepare(step)
      const headers: Record<string, string> = {
        ...(contentType !== undefined ? { "content-type": contentType } : {}),
        ...(body.length > 0 || (step.method !== "GET" && step.method !== "DELETE" && step.method !== "HEAD")
          ? { "content-length": String(body.length) }
          : {}),
        ...extra
      }
      const signed = signedHeaders(step, name, target, body)
      const from = performance.now()
      const answer = await send(port, step.method, target, { ...headers, ...signed }, body)
      const ms = performance.now() - from
      const raw: Raw = {
        step,
        name,
        as: step.as ?? "full",
        target,
        sentHeaders: extra,
        body,
        summary: bodySummary(step, body, vars),
        answer,
        ms
      }
      return raw
    }

    const check = (raw: Raw, expected: number) => {
      if (raw.answer.status !== expected) {
        problems.push(`${raw.name}: expected ${expected}, got ${raw.answer.status} ${raw.answer.body.toString("utf8").slice(0, 300)}`)
      }
    }

    for (const step of options.steps) {
      if ("wait" in step) {
        const pending = background.get(step.wait)
        if (pending === undefined) throw new Error(`wait: no background step ${step.wait}`)
        const from = Date.now()
        await pending
        if (Date.now() - from > 100) log(`wire corpus: waited ${((Date.now() - from) / 1000).toFixed(1)} s for ${step.wait}`)
        continue
      }
      if ("admin" in step) {
        const args = step.admin.map((a) => fill(a, vars))
        const run = () => runAdmin(options.root, env, args).then((out) => capture(step.capture, out, `admin ${args.join(" ")}`))
        if (step.background === undefined) await run()
        else {
          // After the previous command of the same name, if any.
          const chained = (background.get(step.background) ?? Promise.resolve()).then(run)
          chained.catch(() => {})
          background.set(step.background, chained)
        }
        continue
      }
      if (step.concurrentRepeat !== undefined) {
        const from = Date.now()
        const first = sendStep(step, step.name)
        await sleep(step.concurrentRepeat.afterMs)
        const second = sendStep(step, step.concurrentRepeat.repeatName)
        const both = await Promise.all([first, second])
        log(`wire corpus: ${step.name} took ${((Date.now() - from) / 1000).toFixed(1)} s`)
        // Whichever request kept its answer first ran (the other is its replay, or refused): the
        // answers are recorded in a fixed order.
        const ran = both.find((r) => r.answer.status === step.status && r.answer.headers["idempotent-replayed"] === undefined) ??
          both[0]!
        const repeat = both.find((r) => r !== ran)!
        const ranEntry = { ...ran, name: step.name }
        const repeatEntry = { ...repeat, name: step.concurrentRepeat.repeatName }
        check(ranEntry, step.status)
        check(repeatEntry, step.concurrentRepeat.repeatStatus)
        raws.push(ranEntry, repeatEntry)
        capture(step.capture, JSON.parse(ran.answer.body.toString("utf8")), step.name)
        continue
      }
      const from = Date.now()
      const raw = await sendStep(step, step.name)
      if (Date.now() - from > 1000) log(`wire corpus: ${step.name} took ${((Date.now() - from) / 1000).toFixed(1)} s`)
      check(raw, step.status)
      raws.push(raw)
      if (step.capture !== undefined) {
        let parsed: unknown
        try {
          parsed = JSON.parse(raw.answer.body.toString("utf8"))
        } catch {
          throw new Error(`${step.name}: the answer is not JSON, nothing to capture`)
        }
        capture(step.capture, parsed, step.name)
      }
    }
    await Promise.all(background.values())

    const openapiAnswer = await send(port, "GET", "/api/open/v1/openapi.json", {}, Buffer.alloc(0))
    const openapi: unknown = JSON.parse(openapiAnswer.body.toString("utf8"))
    const ended = Date.now()

    // Normalisation, in case order, once the run's time window is known.
    const known: Array<readonly [string, string]> = []
    for (const [name, c] of clients) {
      known.push([c.appKey, `<app_key:${name}>`], [c.appSecret, `<app_secret:${name}>`])
      if (c.previousSecret !== undefined) known.push([c.previousSecret, `<previous_app_secret:${name}>`])
    }
    const n = new Normaliser({ startMs: started, endMs: ended }, known)
    const entries = raws.map((raw): WireEntry => {
      const summary = raw.summary
      const sentHeaders = Object.keys(raw.sentHeaders).length > 0
        ? Object.fromEntries(Object.entries(raw.sentHeaders).map(([k, v]) => [k, n.text(v)]))
        : undefined
      const request = {
        method: raw.step.method,
        path: n.text(raw.target),
        as: raw.as,
        ...(raw.step.sign !== undefined ? { sign: raw.step.sign } : {}),
        ...(sentHeaders !== undefined ? { headers: sentHeaders } : {}),
        ...(summary !== undefined ? { body: n.text(summary) } : {})
      }
      // A 429's wait is the time left until the next token: it depends on how fast the run goes.
      const limited = raw.answer.status === 429
      const headers: Record<string, string> = {}
      for (const name of RECORDED_HEADERS) {
        const value = raw.answer.headers[name]
        if (value === undefined) continue
        if (raw.step.statusAndTypeOnly === true && name !== "content-type") continue
        headers[name] = limited && name === "retry-after" ? "<n>" : n.header(name, value, raw.sentHeaders["x-request-id"])
      }
      let body = n.text(raw.answer.body.toString("utf8"))
      if (limited) body = body.replace(/"retry_after":\d+/g, "\"retry_after\":<n>")
      return {
        name: raw.name,
        request,
        response: {
          status: raw.answer.status,
          headers,
          ...(raw.step.statusAndTypeOnly === true ? {} : { body })
        }
      }
    })
    const timings = raws.map((r) => ({ name: r.name, ms: Math.round(r.ms) }))
    return { entries, problems, openapi, seconds: (ended - started) / 1000, timings }
  } catch (error) {
    if (api !== undefined) log(`API log (last lines):\n${api.log().slice(-4000)}`)
    throw error
  } finally {
    const running = api ?? await apiStarting?.catch(() => undefined)
    await running?.stop().catch(() => {})
    await adminDb.query(`DROP DATABASE IF EXISTS ${escapeIdentifier(database)} WITH (FORCE)`).catch(() => {})
    await adminDb.end().catch(() => {})
  }
}

// The wire corpus (test/wire/): every operation of the Open API, sent in a fixed order by a plain
// Node driver to the API started as a child process on a fresh copy of the migrated database, must
// answer exactly what test/fixtures/wire-corpus.json recorded: the same status, the same contract
// headers and the same body bytes (after the normalisation of test/wire/normalise.ts: clock, ids
// drawn by chance). And the served OpenAPI document must describe the same operations as
// test/fixtures/wire-openapi.json. Nothing here imports the service's code or `effect`, so the test
// runs unchanged whatever the service is built on.
//
// WIRE_CORPUS_RECORD=1 npx vitest run test/wire.test.ts   rewrites both fixtures from this build.
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

import { beforeAll, describe, expect, inject, it } from "vitest"

import { databaseAdminUrl } from "./support/cluster.js"
import { CLIENTS, OPERATIONS, STEPS } from "./wire/corpus.js"
import { type RunResult, runWireCorpus, type WireEntry } from "./wire/driver.js"
import { type OperationSummary, summariseOpenApi, templatePattern } from "./wire/openapi.js"
import { signature, sortedQuery, stringToSign } from "./wire/signing.js"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const CORPUS_FILE = path.join(ROOT, "test/fixtures/wire-corpus.json")
const OPENAPI_FILE = path.join(ROOT, "test/fixtures/wire-openapi.json")
const RECORD = process.env["WIRE_CORPUS_RECORD"] === "1"

const readJson = <A>(file: string): A | undefined => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) as A : undefined)
const writeJson = (file: string, value: unknown) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`)

/** Where two texts first differ, with a little of each around it. */
const textDiff = (recorded: string, now: string): string => {
  let i = 0
  while (i < recorded.length && i < now.length && recorded[i] === now[i]) i++
  const from = Math.max(0, i - 60)
  return `at character ${i}:\n      recorded: …${recorded.slice(from, i + 100)}…\n      now:      …${now.slice(from, i + 100)}…`
}

const entryDiff = (recorded: WireEntry | undefined, now: WireEntry | undefined): string => {
  if (recorded === undefined) return "    not in the recorded corpus (re-record after changing the corpus)"
  if (now === undefined) return "    recorded, but not sent by this run"
  const lines: Array<string> = []
  if (recorded.response.status !== now.response.status) {
    lines.push(`    status: recorded ${recorded.response.status}, now ${now.response.status}`)
  }
  const names = new Set([...Object.keys(recorded.response.headers), ...Object.keys(now.response.headers)])
  for (const name of names) {
    const a = recorded.response.headers[name]
    const b = now.response.headers[name]
    if (a !== b) lines.push(`    header ${name}: recorded ${a ?? "(none)"}, now ${b ?? "(none)"}`)
  }
  if (recorded.response.body !== now.response.body) {
    lines.push(`    body ${textDiff(recorded.response.body ?? "", now.response.body ?? "")}`)
  }
  if (JSON.stringify(recorded.request) !== JSON.stringify(now.request)) {
    lines.push(
      `    request: recorded ${JSON.stringify(recorded.request).slice(0, 300)}\n             now ${
        JSON.stringify(now.request).slice(0, 300)
      }`
    )
  }
  return lines.join("\n")
}

/** The operation a concrete request path belongs to: the matching template with the fewest parameters. */
const operationOf = (operations: ReadonlyArray<OperationSummary>, method: string, target: string) => {
  const p = target.split("?")[0]!
  const candidates = operations.filter((op) => op.method === method && templatePattern(op.path).test(p))
  return candidates.sort((a, b) => a.path.split("{").length - b.path.split("{").length)[0]
}

describe("the corpus signer (plain node:crypto, DECISIONS §2)", () => {
  it("reproduces every shared signing vector", () => {
    const vectors = JSON.parse(readFileSync(path.join(ROOT, "test/fixtures/signing-vectors.json"), "utf8")) as {
      app_key: string
      app_secret: string
      timestamp: number
      cases: Array<
        {
          method: string
          path: string
          raw_query: string
          body_base64: string
          nonce: string
          sorted_query: string
          string_to_sign: string
          signature: string
        }
      >
    }
    for (const c of vectors.cases) {
      const input = {
        method: c.method,
        path: c.path,
        rawQuery: c.raw_query,
        appKey: vectors.app_key,
        timestamp: String(vectors.timestamp),
        nonce: c.nonce,
        body: Buffer.from(c.body_base64, "base64")
      }
      expect(sortedQuery(c.raw_query)).toBe(c.sorted_query)
      expect(stringToSign(input)).toBe(c.string_to_sign)
      expect(signature(vectors.app_secret, input)).toBe(c.signature)
    }
  })
})

describe("the wire corpus", () => {
  let run: RunResult

  beforeAll(async () => {
    run = await runWireCorpus({
      adminUrl: databaseAdminUrl(),
      template: inject("templateDatabase"),
      root: ROOT,
      clients: CLIENTS,
      steps: STEPS,
      log: (line) => process.stderr.write(`${line}\n`)
    })
    process.stderr.write(`wire corpus: ${run.entries.length} answers in ${run.seconds.toFixed(1)} s\n`)
    if (RECORD && run.problems.length === 0) {
      writeJson(CORPUS_FILE, run.entries)
      writeJson(OPENAPI_FILE, summariseOpenApi(run.openapi))
      process.stderr.write(`wire corpus: recorded ${path.relative(ROOT, CORPUS_FILE)} and ${path.relative(ROOT, OPENAPI_FILE)}\n`)
    }
  }, 600_000)

  it("every case gets the status it was written for, and every name is unique", () => {
    expect(run.problems, `cases answered otherwise than they declare (nothing was recorded):\n${run.problems.join("\n")}`).toEqual([])
    const names = run.entries.map((e) => e.name)
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([])
  })

  it("every operation answers the recorded statuses and bytes", () => {
    const recorded = readJson<Array<WireEntry>>(CORPUS_FILE)
    if (recorded === undefined) throw new Error(`${CORPUS_FILE} is missing: run WIRE_CORPUS_RECORD=1 npx vitest run test/wire.test.ts`)
    const byName = new Map(recorded.map((e) => [e.name, e]))
    const nowNames = new Set(run.entries.map((e) => e.name))
    const differing: Array<string> = []
    for (const entry of run.entries) {
      if (JSON.stringify(byName.get(entry.name)) !== JSON.stringify(entry)) differing.push(entry.name)
    }
    for (const entry of recorded) if (!nowNames.has(entry.name)) differing.push(entry.name)
    const order = recorded.map((e) => e.name).filter((n) => nowNames.has(n))
    const nowOrder = run.entries.map((e) => e.name).filter((n) => byName.has(n))
    const reordered = JSON.stringify(order) !== JSON.stringify(nowOrder)
    if (differing.length === 0 && !reordered) return
    const details = differing.slice(0, 5).map((name) =>
      `  ${name}\n${entryDiff(byName.get(name), run.entries.find((e) => e.name === name))}`
    )
    throw new Error(
      [
        `${differing.length} of ${run.entries.length} answers differ from ${path.relative(ROOT, CORPUS_FILE)}` +
        (reordered ? " (and the order of the cases changed)" : "") + ":",
        ...differing.map((n) => `  - ${n}`),
        "",
        "The first differences:",
        ...details,
        "",
        "If the change is intended, re-record: WIRE_CORPUS_RECORD=1 npx vitest run test/wire.test.ts"
      ].join("\n")
    )
  })

  it("every operation of the served document has a success and (where it documents one) an error in the corpus", () => {
    const operations = summariseOpenApi(run.openapi)
    const covered = new Map<string, Set<number>>()
    for (const entry of run.entries) {
      const op = operationOf(operations, entry.request.method, entry.request.path)
      if (op === undefined) continue
      const statuses = covered.get(op.operationId) ?? new Set<number>()
      statuses.add(entry.response.status)
      covered.set(op.operationId, statuses)
    }
    const missing = operations.filter((op) => {
      const statuses = covered.get(op.operationId)
      const documentsErrors = op.statuses.some((s) => s.startsWith("4"))
      return statuses === undefined || !statuses.has(200) || (documentsErrors && [...statuses].every((s) => s === 200))
    })
    expect(missing.map((op) => `${op.operationId} (${op.method} ${op.path}): ${[...(covered.get(op.operationId) ?? [])].join(", ")}`))
      .toEqual([])
    expect(OPERATIONS.map((op) => op.id).sort()).toEqual(operations.map((op) => op.operationId).sort())
  })

  it("the served OpenAPI document describes the recorded operations (method, path, operationId, statuses, parameters, bodies)", () => {
    const recorded = readJson<Array<OperationSummary>>(OPENAPI_FILE)
    if (recorded === undefined) throw new Error(`${OPENAPI_FILE} is missing: run WIRE_CORPUS_RECORD=1 npx vitest run test/wire.test.ts`)
    expect(summariseOpenApi(run.openapi)).toEqual(recorded)
  })
})

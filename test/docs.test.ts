// Every fenced code block of README.md and docs/**/*.md is run or type-checked, so a snippet cannot
// drift from the code again. The conventions (docs/contributor.md, "Code blocks in the docs"):
// ```sh / ```bash blocks run with bash and ```python blocks with python3 (standard library only),
// each against a started service whose address and credentials are in BASE_URL, APP_KEY and
// APP_SECRET; ```ts blocks are type-checked against the project (one tsc run for all of them) and,
// after `<!-- run -->`, also run against the service; ```text is output and ```json is parsed.
// `<!-- file: NAME -->` also saves a block as NAME in the working folder the blocks share (the
// signing helpers, which are then checked against the shared signing vectors here). A block that is
// not meant to run says why, `<!-- not-run: reason -->`; any other block fails this test.
import { execFile } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import { Webhook } from "standardwebhooks"

import { liveSigner } from "../src/auth/Signer.js"
import vectors from "./fixtures/signing-vectors.json" with { type: "json" }
import { liveAppLayer, serverLayer, signedClient } from "./support/harness.js"

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)))
const BIN = join(ROOT, "node_modules", ".bin")

// ---------------------------------------------------------------------------------------------
// Reading the blocks

type Language = "sh" | "python" | "ts" | "text" | "json"

const LANGUAGES: Record<string, Language> = {
  sh: "sh",
  bash: "sh",
  shell: "sh",
  python: "python",
  py: "python",
  ts: "ts",
  typescript: "ts",
  text: "text",
  json: "json"
}

export interface Block {
  /** Path of the Markdown file, relative to the checkout. */
  readonly doc: string
  /** 1-based line of the opening fence. */
  readonly line: number
  /** The info string's first word as written. */
  readonly info: string
  readonly language: Language | undefined
  readonly code: string
  /** `<!-- not-run: reason -->` */
  readonly notRun: string | undefined
  /** `<!-- run -->` (TypeScript blocks: run as well as type-check). */
  readonly run: boolean
  /** `<!-- file: NAME -->` */
  readonly file: string | undefined
}

const MARKER = /^\s*<!--\s*(not-run|run|file)\s*(?::\s*(.*?))?\s*-->\s*$/

/** The Markdown files whose blocks are checked: README.md and every .md under docs/, in order. */
export const documents = (): Array<string> => {
  const walk = (dir: string): Array<string> =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : []
    )
  return ["README.md", ...(existsSync(join(ROOT, "docs")) ? walk("docs").sort() : [])]
}

/** Every fenced block of a Markdown text, with the markers in the comment lines just above it. */
export const blocksOf = (doc: string, text: string): Array<Block> => {
  const lines = text.split("\n")
  const out: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!)
    if (open === null) continue
    const [, indent, fence, info] = open as unknown as [string, string, string, string]
    let end = i + 1
    while (end < lines.length && !new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`).test(lines[end]!)) end++
    const code = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart())).join("\n") + "\n"
    let notRun: string | undefined
    let run = false
    let file: string | undefined
    for (let j = i - 1; j >= 0; j--) {
      if (lines[j]!.trim() === "") continue
      const marker = MARKER.exec(lines[j]!)
      if (marker === null) break
      if (marker[1] === "not-run") notRun = marker[2] ?? ""
      else if (marker[1] === "run") run = true
      else file = marker[2] ?? ""
    }
    out.push({ doc, line: i + 1, info, language: LANGUAGES[info.toLowerCase()], code, notRun, run, file })
    i = end
  }
  return out
}

const allBlocks = (): Array<Block> => documents().flatMap((doc) => blocksOf(doc, readFileSync(join(ROOT, doc), "utf8")))

/** Commands a shell block may not run unmarked: they install, start the service or run the suite. */
const UNSAFE = /\b(npm (install|ci|start|test|run)|npx (vitest|tsc|eslint)|vitest run)\b/

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export const anchorOf = (heading: string) =>
  heading.replace(/`/g, "").trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")

/** The anchors of a Markdown text's headings (outside code blocks), repeats numbered as GitHub does. */
const anchorsOf = (text: string): Set<string> => {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  let fenced = false
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    const heading = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line)
    if (heading === null) continue
    const base = anchorOf(heading[1]!)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

const where = (b: Block) => `${b.doc}:${b.line}`

/** What is wrong with a block's markers, or undefined when the test knows what to do with it. */
export const problemOf = (b: Block): string | undefined => {
  if (b.notRun !== undefined) return b.notRun === "" ? "`not-run` needs a reason: <!-- not-run: why -->" : undefined
  if (b.language === undefined) {
    return b.info === ""
      ? "a block without a language: say ```sh, ```python, ```ts or ```text (output), or mark it <!-- not-run: why -->"
      : `a \`\`\`${b.info} block cannot be run: use sh, python, ts, json or text, or mark it <!-- not-run: why -->`
  }
  if (b.file !== undefined && !/^[\w.-]+$/.test(b.file)) return `file name ${JSON.stringify(b.file)}: letters, digits, . _ - only`
  if (b.run && b.language !== "ts") return "`run` is for ts blocks (sh and python blocks always run)"
  const unsafe = b.language === "sh" ? UNSAFE.exec(b.code) : null
  if (unsafe !== null) return `\`${unsafe[0]}\` must not run inside the test suite: mark the block <!-- not-run: why -->`
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Running them

interface RunResult {
  readonly code: number
  readonly output: string
}

const run = (file: string, args: ReadonlyArray<string>, options: { cwd: string; env?: Record<string, string>; timeoutMs?: number }) =>
  Effect.callback<RunResult>((resume) => {
    execFile(file, args, {
      cwd: options.cwd,
      env: { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ""}`, ...options.env },
      timeout: options.timeoutMs ?? 30_000,
      maxBuffer: 16 * 1024 * 1024
    }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resume(Effect.succeed({ code, output: `${stdout}${stderr}`.slice(-4000) }))
    })
  })

/** The working folder of the blocks: inside the checkout, so that snippets resolve its packages. */
const scratch = Effect.acquireRelease(
  Effect.promise(async () => {
    const dir = await mkdtemp(join(ROOT, ".docs-check-"))
    await mkdir(dir, { recursive: true })
    return dir
  }),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/**
 * A TypeScript block as a file of the working folder: it is written as if it were at the checkout's
 * root, so a relative import of a file the checkout has (`./src/client/Client.js`) is pointed there.
 */
const tsSource = (code: string, dir: string) =>
  code.replace(/(from\s+|import\()(["'])\.\/([^"']+)\2/g, (all, head: string, quote: string, path: string) => {
    const onDisk = join(ROOT, path.replace(/\.js$/, ".ts"))
    return existsSync(onDisk) ? `${head}${quote}${relative(dir, join(ROOT, path)).split("\\").join("/")}${quote}` : all
  })

/** Runs each block's module in turn; names the block of every failure. */
const RUNNER = `let failed = 0
for (const [where, file] of ENTRIES) {
  try {
    await import(file)
  } catch (error) {
    failed++
    console.error(\`\${where} failed: \${error instanceof Error ? error.stack : String(error)}\`)
  }
}
process.exitCode = failed === 0 ? 0 : 1
`

const tsName = (b: Block) => `${b.doc.replace(/\W+/g, "_")}_L${b.line}.ts`

const TEST_LAYER = serverLayer.pipe(
  Layer.provideMerge(liveAppLayer({ rateLimitBurst: 1_000_000 })),
  Layer.provideMerge(FetchHttpClient.layer),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
)

layer(TEST_LAYER, { excludeTestServices: true, timeout: 120_000 })("documentation code blocks", (it) => {
  const blocks = allBlocks()

  it("every code block of README.md and docs/ is run, type-checked, output, or says why it is not run", () => {
    const problems = blocks.flatMap((b) => {
      const problem = problemOf(b)
      return problem === undefined ? [] : [`${where(b)}: ${problem}`]
    })
    expect(problems).toEqual([])
    const files = blocks.flatMap((b) => (b.file !== undefined ? [b.file] : []))
    expect(files.filter((f, i) => files.indexOf(f) !== i), "file names are shared by every document").toEqual([])
  })

  it("every relative link of README.md and docs/ names a file of the checkout and, with #, one of its headings", () => {
    const broken: Array<string> = []
    for (const doc of documents()) {
      const text = readFileSync(join(ROOT, doc), "utf8").replace(/```[\s\S]*?```/g, "")
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue
        const [file, anchor] = target!.split("#") as [string, string | undefined]
        const path = file === "" ? join(ROOT, doc) : resolve(join(ROOT, doc, ".."), file)
        if (!existsSync(path)) broken.push(`${doc}: ${target} (no such file)`)
        else if (anchor !== undefined && path.endsWith(".md") && !anchorsOf(readFileSync(path, "utf8")).has(anchor)) {
          broken.push(`${doc}: ${target} (no such heading)`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  it("README's quick start is two command lines, and its test command is the one .ci/run calls", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8")
    const quickStart = blocksOf("README.md", readme.slice(readme.indexOf("## Quick start")))[0]!
    const commands = quickStart.code.split("\n").filter((l) => l.trim() !== "" && !l.trim().startsWith("#"))
    expect(commands).toHaveLength(2)
    expect(commands[0]).toMatch(/^npm install && npm start\b/)
    expect(commands[1]).toMatch(/^npm install && npm test\b/)
    const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8")
    expect(ci).toMatch(/^npm install\b/m)
    expect(ci).toMatch(/^npm test$/m)
    // README names the Node that runs the service, which package.json pins.
    const pinned = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> })
      .dependencies["node"]
    expect(readme).toContain(`Node **${pinned}**`)
  })

  it.effect(
    "the shell, Python and TypeScript blocks run against a started service and type-check against the project",
    () =>
      Effect.gen(function*() {
        const { baseUrl, credentials } = yield* signedClient()
        const dir = yield* scratch
        const env = { BASE_URL: baseUrl, APP_KEY: credentials.appKey, APP_SECRET: credentials.appSecret }
        const failures: Array<string> = []
        const runnable = blocks.filter((b) => b.notRun === undefined && problemOf(b) === undefined)

        // Shell and Python blocks in document order (a block may use a file an earlier one saved).
        for (const b of runnable) {
          if (b.language === "json") {
            try {
              JSON.parse(b.code)
            } catch (e) {
              failures.push(`${where(b)}: not JSON: ${String(e)}`)
            }
            continue
          }
          if (b.language !== "sh" && b.language !== "python") continue
          const name = b.file ?? `${b.doc.replace(/\W+/g, "_")}_L${b.line}.${b.language === "sh" ? "sh" : "py"}`
          yield* Effect.promise(() => writeFile(join(dir, name), b.code))
          const result = b.language === "sh"
            ? yield* run("bash", ["-e", "-o", "pipefail", name], { cwd: dir, env })
            : yield* run("python3", [name], { cwd: dir, env })
          if (result.code !== 0) failures.push(`${where(b)} (${b.language}) exited ${result.code}:\n${result.output}`)
        }

        // TypeScript blocks: one type-check for all of them, then the runnable ones.
        const ts = runnable.filter((b) => b.language === "ts")
        for (const b of ts) yield* Effect.promise(() => writeFile(join(dir, tsName(b)), tsSource(b.code, dir)))
        yield* Effect.promise(() =>
          writeFile(
            join(dir, "tsconfig.json"),
            JSON.stringify({
              extends: join(ROOT, "tsconfig.json"),
              compilerOptions: { noEmit: true, noUnusedLocals: false },
              include: [],
              files: ts.map(tsName)
            })
          )
        )
        if (ts.length > 0) {
          const check = yield* run(join(BIN, "tsc"), ["-p", join(dir, "tsconfig.json")], { cwd: dir, timeoutMs: 90_000 })
          if (check.code !== 0) {
            // Name the Markdown line of each error: file(line,col) → doc:fence line + line.
            const byName = new Map(ts.map((b) => [tsName(b), b]))
            const located = check.output.replace(/([\w.]+\.ts)\((\d+),(\d+)\)/g, (all, file: string, line: string) => {
              const b = byName.get(file)
              return b === undefined ? all : `${b.doc}:${b.line + Number(line)}`
            })
            failures.push(`TypeScript blocks do not type-check:\n${located}`)
          } else if (ts.some((b) => b.run)) {
            // The runnable blocks one after the other in one process (the project's modules load once).
            const entries = ts.filter((b) => b.run).map((b) => [where(b), `./${tsName(b)}`])
            yield* Effect.promise(() => writeFile(join(dir, "run-blocks.ts"), RUNNER.replace("ENTRIES", JSON.stringify(entries))))
            const result = yield* run(process.execPath, ["--import", "tsx", "run-blocks.ts"], { cwd: dir, env, timeoutMs: 90_000 })
            if (result.code !== 0) failures.push(`TypeScript blocks failed when run:\n${result.output}`)
          }
        }
        expect(failures.join("\n\n")).toBe("")
      }),
    120_000
  )

  it.effect("the Python and shell signers of the docs reproduce every shared signing vector", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const python = blocks.find((b) => b.file === "open_api_signing.py")
      const shell = blocks.find((b) => b.file === "open-api-sign.sh")
      expect(python, "docs/signing.md saves open_api_signing.py").toBeDefined()
      expect(shell, "docs/signing.md saves open-api-sign.sh").toBeDefined()
      yield* Effect.promise(() => writeFile(join(dir, "open_api_signing.py"), python!.code))
      yield* Effect.promise(() => writeFile(join(dir, "open-api-sign.sh"), shell!.code))
      yield* Effect.promise(() => writeFile(join(dir, "vectors.json"), JSON.stringify(vectors)))
      // Python: the canonical string (sorting and encoding the raw query itself) and the signature.
      const py = yield* run("python3", [
        "-c",
        `import base64, json
from open_api_signing import string_to_sign, signature
v = json.load(open("vectors.json"))
for c in v["cases"]:
    s = string_to_sign(c["method"], c["path"], c["raw_query"], v["app_key"], str(v["timestamp"]), c["nonce"], base64.b64decode(c["body_base64"]))
    print(json.dumps([c["description"], s, signature(v["app_secret"], s)]))`
      ], { cwd: dir })
      expect(py.code, py.output).toBe(0)
      const pyResults = py.output.trim().split("\n").map((l) => JSON.parse(l) as [string, string, string])
      expect(pyResults).toEqual(vectors.cases.map((c) => [c.description, c.string_to_sign, c.signature]))
      // Shell: the signature of each case from its canonical query line and its body bytes.
      for (const [i, c] of vectors.cases.entries()) {
        yield* Effect.promise(() => writeFile(join(dir, `body-${i}`), Buffer.from(c.body_base64, "base64")))
        const sh = yield* run("bash", [
          "-c",
          `. ./open-api-sign.sh && open_api_signature "$1" "$2" "$3" "$4" "$5" "$6"`,
          "sign",
          c.method,
          c.path,
          c.sorted_query,
          String(vectors.timestamp),
          c.nonce,
          `body-${i}`
        ], { cwd: dir, env: { APP_KEY: vectors.app_key, APP_SECRET: vectors.app_secret } })
        expect([c.description, sh.code, sh.output.trim()]).toEqual([c.description, 0, c.signature])
      }
    }))

  it.effect("the no-library webhook verifier accepts what the service signs, also during a rotation, and refuses anything else", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const verifier = blocks.find((b) => b.file === "verify_webhook.py")
      expect(verifier, "docs/webhooks.md saves verify_webhook.py").toBeDefined()
      yield* Effect.promise(() => writeFile(join(dir, "verify_webhook.py"), verifier!.code))
      // A signing secret as the service issues it (self-service PUT /webhook), then a rotation.
      const { client } = yield* signedClient()
      const first = yield* client.selfService.updateWebhook({ payload: { url: "http://127.0.0.1:9/hooks", events: ["guest.created"] } })
      const rotated = yield* client.selfService.rotateWebhookSecret()
      const [oldSecret, newSecret] = [first.signing_secret!, rotated.signing_secret]
      const id = "evt_01docs"
      const now = Math.floor(Date.now() / 1000)
      const body = JSON.stringify({ id, type: "guest.created", created_at: "2026-05-01T10:00:00", data: { guest_id: 1, name: "张三" } })
      const headers = (secrets: ReadonlyArray<string>, timestamp = now) => ({
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": liveSigner.webhookSignature(secrets, id, timestamp, body)
      })
      // The reference library agrees with the service's signature.
      expect(new Webhook(newSecret).verify(body, headers([newSecret]))).toMatchObject({ id })
      const cases: Array<[string, string, Record<string, string>, string, boolean]> = [
        ["signed with the secret", newSecret, headers([newSecret]), body, true],
        ["during a rotation, by the old secret", oldSecret, headers([newSecret, oldSecret]), body, true],
        ["during a rotation, by the new secret", newSecret, headers([newSecret, oldSecret]), body, true],
        ["a changed body", newSecret, headers([newSecret]), body.replace("张三", "李四"), false],
        ["another secret", oldSecret, headers([newSecret]), body, false],
        ["ten minutes old", newSecret, headers([newSecret], now - 600), body, false]
      ]
      yield* Effect.promise(() => writeFile(join(dir, "webhook-cases.json"), JSON.stringify(cases)))
      const py = yield* run("python3", [
        "-c",
        `import json
from verify_webhook import verify
for name, secret, headers, body, _ in json.load(open("webhook-cases.json")):
    try:
        event = verify(secret, headers, body.encode())
        print(json.dumps([name, event["id"]]))
    except ValueError as e:
        print(json.dumps([name, None]))`
      ], { cwd: dir })
      expect(py.code, py.output).toBe(0)
      const results = py.output.trim().split("\n").map((l) => JSON.parse(l) as [string, string | null])
      expect(results).toEqual(cases.map(([name, , , , ok]) => [name, ok ? id : null]))
    }))
})

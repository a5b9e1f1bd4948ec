// Any stop of `npm start` is a clean stop: the real `npm start` (compiled, under npm, without
// DATABASE_URL, so on its own embedded PostgreSQL) runs in a temporary copy of the project; each
// case stops it another way and then waits (bounded) until every process of its tree and the
// PostgreSQL server are gone.
import { execFile, spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { findFreePort, stopEmbeddedPostgres } from "../src/sql/embedded.js"
import { withBuildLock } from "./support/buildLock.js"
import { eventually } from "./support/eventually.js"
import { logLines } from "./support/processes.js"

const checkout = process.cwd()
let copy: string
let env: Record<string, string>
const started: Array<number> = []

// Whether `pid` has died: gone, or a zombie nobody has reaped yet (which kill(pid, 0) still finds).
const hasDied = async (pid: number): Promise<boolean> => {
  const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined)
  return stat === undefined || /\) [ZX] /.test(stat)
}

const parentOf = async (pid: number): Promise<number> => {
  const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
}

/** Every living descendant of `root`, found through /proc. */
const descendants = async (root: number): Promise<Array<number>> => {
  const children = new Map<number, Array<number>>()
  for (const entry of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const parent = await parentOf(Number(entry)).catch(() => undefined)
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), Number(entry)])
  }
  const found: Array<number> = []
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      found.push(child)
      walk(child)
    }
  }
  walk(root)
  return found
}

const commandLine = (pid: number) => fs.readFile(`/proc/${pid}/cmdline`, "utf8").then((s) => s.split("\0").join(" "), () => "")

const postmasterPid = async (): Promise<number> =>
  Number.parseInt(await fs.readFile(path.join(copy, ".data", "pg", "postmaster.pid"), "utf8"), 10)

interface Tree {
  readonly npm: number
  readonly start: number
  readonly api: number
  readonly jobs: number
  /** npm and everything below it, as it was once ready. */
  readonly processes: ReadonlyArray<number>
  readonly postgres: number
  readonly log: () => string
}

const startedPid = (log: string, label: string): number | undefined => {
  const line = logLines(log).find((l) => l.message?.startsWith(`started ${label} (pid `) === true)
  return line === undefined ? undefined : Number(/pid (\d+)/.exec(line.message!)![1])
}

/** `npm start` in the copy, once the API listens and the daemon is ready. */
const startTree = Effect.gen(function*() {
  const child = spawn("npm", ["start", "--ignore-scripts"], { cwd: copy, env, stdio: ["ignore", "ignore", "pipe"] })
  let log = ""
  child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString()))
  started.push(child.pid!)
  yield* eventually(
    "npm start to be ready",
    Effect.sync(() => ({ exited: child.exitCode, ready: log.includes("job daemon ready") && log.includes("Listening on") })),
    (s) => s.ready || s.exited !== null,
    90_000
  )
  if (!log.includes("Listening on")) return yield* Effect.die(new Error(`npm start did not start: ${log.slice(-3000)}`))
  const processes = yield* Effect.promise(() => descendants(child.pid!))
  const lines = yield* Effect.promise(() => Promise.all(processes.map(async (pid) => ({ pid, cmd: await commandLine(pid) }))))
  const tree: Tree = {
    npm: child.pid!,
    start: lines.find((l) => l.cmd.includes("dist/scripts/start.js") && !l.cmd.startsWith("sh "))!.pid,
    api: startedPid(log, "the API")!,
    jobs: startedPid(log, "the job daemon")!,
    processes: [child.pid!, ...processes],
    postgres: yield* Effect.promise(postmasterPid),
    log: () => log
  }
  started.push(...tree.processes, tree.postgres)
  expect(tree.processes).toEqual(expect.arrayContaining([tree.start, tree.api, tree.jobs]))
  return tree
})

/** Waits until every process of the tree and (unless told otherwise) the PostgreSQL server have died. */
const allGone = (tree: Tree, opts?: { readonly postgres: boolean }) =>
  eventually(
    "every process of the tree and PostgreSQL to be gone",
    Effect.promise(async () => {
      const pids = opts?.postgres === false ? tree.processes : [...tree.processes, tree.postgres]
      const alive = await Promise.all(pids.map(async (pid) => ((await hasDied(pid)) ? [] : [pid])))
      return alive.flat()
    }),
    (alive) => alive.length === 0,
    60_000
  )

const messages = (tree: Tree) => logLines(tree.log()).flatMap((l) => (l.message === undefined ? [] : [l.message]))

const expectCleanStop = (tree: Tree, reason: RegExp) => {
  const seen = messages(tree)
  expect(seen).toEqual(expect.arrayContaining([
    expect.stringMatching(reason),
    expect.stringMatching(/^stopping the embedded PostgreSQL/),
    "the embedded PostgreSQL stopped"
  ]))
}

describe("npm start stops cleanly", () => {
  beforeAll(async () => {
    copy = await fs.mkdtemp(path.join(os.tmpdir(), "mm-clean-stop-"))
    // The postgres OS user (the server's, when tests run as root) passes through it to .data/pg.
    await fs.chmod(copy, 0o755)
    // The compiled build is what npm start runs (its prestart builds; here it is skipped). Built and
    // copied under the build lock: another test file may be building dist/ at the same time.
    await withBuildLock(async () => {
      await new Promise<void>((resolve, reject) =>
        execFile(
          "npm",
          ["run", "-s", "build"],
          { cwd: checkout },
          (error, _stdout, stderr) => error === null ? resolve() : reject(new Error(`build failed: ${stderr}`))
        )
      )
      await fs.cp(path.join(checkout, "dist"), path.join(copy, "dist"), { recursive: true })
    }, checkout)
    await fs.cp(path.join(checkout, "migrations"), path.join(copy, "migrations"), { recursive: true })
    await fs.cp(path.join(checkout, "package.json"), path.join(copy, "package.json"))
    await fs.symlink(await fs.realpath(path.join(checkout, "node_modules")), path.join(copy, "node_modules"))
    const inherited = Object.entries(process.env).flatMap(([name, value]) =>
      value === undefined || ["DATABASE_URL", "SECRET_KEY", "JOBS_PORT", "OTEL_EXPORTER_OTLP_ENDPOINT"].includes(name)
        ? []
        : [[name, value] as const]
    )
    env = {
      ...Object.fromEntries(inherited),
      PORT: String(await findFreePort()),
      HOST: "127.0.0.1",
      EMBEDDED_PG_PORT: String(await findFreePort()),
      LOG_LEVEL: "Info"
    }
  }, 180_000)

  afterAll(async () => {
    for (const pid of started) {
      if (!(await hasDied(pid))) process.kill(pid, "SIGKILL")
    }
    if (copy !== undefined) {
      await stopEmbeddedPostgres(path.join(copy, ".data", "pg"), { log: () => {} }).catch(() => false)
      await fs.rm(copy, { recursive: true, force: true })
    }
  })

  it.effect("SIGTERM to the npm process stops the start script, the API, the daemon and PostgreSQL", () =>
    Effect.gen(function*() {
      const tree = yield* startTree
      process.kill(tree.npm, "SIGTERM")
      yield* allGone(tree)
      // npm passes SIGTERM on to the script (which execs the start script).
      expectCleanStop(tree, /^SIGTERM received; stopping the API and the job daemon$/)
    }), 120_000)

  it.effect("SIGTERM to the API alone stops the daemon, the start script, npm and PostgreSQL", () =>
    Effect.gen(function*() {
      const tree = yield* startTree
      process.kill(tree.api, "SIGTERM")
      yield* allGone(tree)
      expect(messages(tree)).toContain("the API exited on its own (code 0)")
      expectCleanStop(tree, /^the API exited; stopping the job daemon$/)
    }), 120_000)

  // The parent is npm (the script execs the start script), so this is also npm killed outright.
  it.effect(
    "SIGKILL to the start script's parent stops the start script, the API, the daemon and PostgreSQL",
    () =>
      Effect.gen(function*() {
        const tree = yield* startTree
        const parent = yield* Effect.promise(() => parentOf(tree.start))
        expect(tree.processes).toContain(parent)
        process.kill(parent, "SIGKILL")
        yield* allGone(tree)
        expectCleanStop(tree, new RegExp(`^the parent process \\(pid ${parent}\\) is gone; stopping the API and the job daemon$`))
      }),
    120_000
  )

  it.effect(
    "on a terminal, npm start's lines are readable and name their process: start, api and jobs; each says loopback is admitted for webhooks",
    () =>
      Effect.gen(function*() {
        // `script` gives npm start a pseudo-terminal; its children's JSON is rendered by the start script.
        const child = spawn("script", ["-qfec", "npm start --ignore-scripts", "/dev/null"], {
          cwd: copy,
          env: { ...env, NO_COLOR: "1" },
          stdio: ["pipe", "pipe", "pipe"],
          detached: true
        })
        started.push(child.pid!)
        let out = ""
        child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()))
        yield* eventually(
          "npm start to be ready",
          Effect.sync(() => out),
          (o) => o.includes("API reference:") && o.includes("job daemon ready"),
          90_000
        )
        const lines = out.split(/\r?\n/).filter((line) => /^\d{4}-/.test(line))
        const processOf = (text: string) => /^\S+ \S+ (\S+)/.exec(lines.find((line) => line.includes(text)) ?? "")?.[1]
        expect(processOf("started the API (pid")).toBe("start")
        expect(processOf("Listening on")).toBe("api")
        expect(processOf("job daemon ready")).toBe("jobs")
        // The quick start admits loopback as a webhook destination, and the start script, the API and
        // the daemon say so.
        expect(processOf("the embedded quick start lets webhooks reach this machine (loopback: 127.0.0.0/8,::1/128)")).toBe("start")
        const admitted = lines.filter((line) =>
          line.includes("webhooks may also be sent to 127.0.0.0/8, ::1/128 (WEBHOOK_ALLOWED_NETWORKS), besides the public internet")
        )
        expect(admitted.map((line) => /^\S+ \S+ (\S+)/.exec(line)?.[1]).sort()).toEqual(["api", "jobs"])
        expect(out).toContain(`API reference: http://127.0.0.1:${env["PORT"]}/docs`)
        expect(out.split(/\r?\n/).filter((line) => line.startsWith("{"))).toEqual([])
        const tree = {
          processes: [child.pid!, ...(yield* Effect.promise(() => descendants(child.pid!)))],
          postgres: yield* Effect.promise(postmasterPid)
        }
        started.push(...tree.processes, tree.postgres)
        process.kill(-child.pid!, "SIGTERM")
        yield* allGone({ ...tree, npm: 0, start: 0, api: 0, jobs: 0, log: () => out })
      }),
    120_000
  )

  it.effect("SIGKILL to the start script: the API and the daemon notice its IPC channel closing and stop", () =>
    Effect.gen(function*() {
      const tree = yield* startTree
      process.kill(tree.start, "SIGKILL")
      // Nothing is left to stop the server: that is what `npm run db:stop` is for.
      yield* allGone(tree, { postgres: false })
      expect(yield* Effect.promise(() => stopEmbeddedPostgres(path.join(copy, ".data", "pg"), { log: () => {} }))).toBe(true)
      yield* allGone(tree)
    }), 120_000)
})

// A real browser for tests: Debian's Chromium, headless, driven over the Chrome DevTools Protocol
// with a minimal client on Node's WebSocket (no dependency). `findChromium` says where it is (or
// that it is not installed); `launchBrowser` starts it on a private profile and opens one page.
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"]

/** The browser to run: CHROMIUM_PATH, else the first of Debian's usual paths that exists. */
export const findChromium = (): string | undefined => {
  const given = process.env["CHROMIUM_PATH"]
  if (given !== undefined && given !== "") return existsSync(given) ? given : undefined
  return CANDIDATES.find((candidate) => existsSync(candidate))
}

export interface CdpEvent {
  readonly method: string
  readonly params: Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** One page's DevTools session. */
export interface Page {
  readonly send: (method: string, params?: Record<string, unknown>) => Promise<Record<string, any>> // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Every event received so far, in order. */
  readonly events: ReadonlyArray<CdpEvent>
  /** The value of a JavaScript expression in the page (awaited when it is a promise). */
  readonly evaluate: <A = unknown>(expression: string) => Promise<A>
  /** Polls `expression` until it is truthy (bounded), returning its value. */
  readonly waitFor: <A = unknown>(what: string, expression: string, timeoutMs?: number) => Promise<A>
}

export interface Browser {
  readonly page: Page
  readonly close: () => Promise<void>
}

const connect = (url: string): Promise<WebSocket> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(url)
    socket.addEventListener("open", () => resolve(socket), { once: true })
    socket.addEventListener("error", () => reject(new Error(`cannot connect to ${url}`)), { once: true })
  })

const makePage = (socket: WebSocket): Page => {
  let nextId = 1
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>() // eslint-disable-line @typescript-eslint/no-explicit-any
  const events: Array<CdpEvent> = []
  socket.addEventListener("message", (message) => {
    const data = JSON.parse(String(message.data)) as {
      id?: number
      result?: unknown
      error?: { message: string }
      method?: string
      params?: Record<string, unknown>
    }
    if (data.id !== undefined) {
      const waiting = pending.get(data.id)
      pending.delete(data.id)
      if (data.error !== undefined) waiting?.reject(new Error(data.error.message))
      else waiting?.resolve(data.result)
    } else if (data.method !== undefined) {
      events.push({ method: data.method, params: data.params ?? {} })
    }
  })
  const send: Page["send"] = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++
      pending.set(id, { resolve, reject })
      socket.send(JSON.stringify({ id, method, params }))
    })
  const evaluate = async <A>(expression: string): Promise<A> => {
    const result = await send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true })
    if (result["exceptionDetails"] !== undefined) {
      throw new Error(`${expression}: ${JSON.stringify(result["exceptionDetails"]).slice(0, 500)}`)
    }
    return result["result"]?.value as A
  }
  const waitFor = async <A>(what: string, expression: string, timeoutMs = 30_000): Promise<A> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const value = await evaluate<A>(expression).catch(() => undefined)
      if (value !== undefined && value !== null && value !== false && value !== "") return value
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return { send, events, evaluate, waitFor }
}

/** Starts headless Chromium on a throwaway profile and connects to a blank page. */
export const launchBrowser = async (executable: string): Promise<Browser> => {
  const profile = await fs.mkdtemp(path.join(os.tmpdir(), "mm-chromium-"))
  const child: ChildProcess = spawn(executable, [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--remote-debugging-port=0",
    `--user-data-dir=${profile}`,
    "--window-size=1400,1000",
    "about:blank"
  ], { stdio: ["ignore", "ignore", "pipe"] })
  const cleanup = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGKILL")
      await exited
    }
    await fs.rm(profile, { recursive: true, force: true })
  }
  try {
    const browserUrl = await new Promise<string>((resolve, reject) => {
      let stderr = ""
      const timer = setTimeout(() => reject(new Error(`Chromium did not start: ${stderr.slice(-2000)}`)), 30_000)
      child.stderr!.on("data", (chunk: Buffer) => {
        stderr += chunk.toString()
        const found = /DevTools listening on (ws:\/\/\S+)/.exec(stderr)
        if (found !== null) {
          clearTimeout(timer)
          resolve(found[1]!)
        }
      })
      child.once("exit", (code) => reject(new Error(`Chromium exited (${code}): ${stderr.slice(-2000)}`)))
    })
    const origin = new URL(browserUrl).host
    const targets = await (await fetch(`http://${origin}/json/list`)).json() as Array<{ type: string; webSocketDebuggerUrl: string }>
    const target = targets.find((t) => t.type === "page")
    if (target === undefined) throw new Error("Chromium opened no page")
    const socket = await connect(target.webSocketDebuggerUrl)
    return {
      page: makePage(socket),
      close: async () => {
        socket.close()
        await cleanup()
      }
    }
  } catch (error) {
    await cleanup()
    throw error
  }
}

// One build of dist/ at a time. The integration project runs several test files at once, and two
// of them build the checkout's dist/: test/admin.test.ts (`npm run admin`, whose pre-script builds)
// and test/cleanStop.test.ts (`npm run build`, then it copies dist/). Two tsc builds writing the
// same files, or a copy while the other writes, would each see half-written files. Whichever takes
// this lock first builds; the other then finds dist/ up to date (scripts/build.mjs builds nothing).
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

/** A lock folder per checkout (its path hashed), in the temp folder. */
const lockDir = (checkout: string) =>
  path.join(os.tmpdir(), `mm-build-lock-${createHash("sha256").update(checkout).digest("hex").slice(0, 12)}`)

const ownerFile = (dir: string) => path.join(dir, "owner")

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Whether the lock's holder died without releasing it (a killed test run). */
const stale = async (dir: string): Promise<boolean> => {
  const owner = Number.parseInt(await fs.readFile(ownerFile(dir), "utf8").catch(() => ""), 10)
  if (Number.isInteger(owner)) return !alive(owner)
  // Just made, its owner file not yet written: stale only if that was long ago.
  const made = await fs.stat(dir).then((s) => s.mtimeMs, () => Date.now())
  return Date.now() - made > 10_000
}

/**
 * Runs `work` holding the checkout's build lock: waits (polling every 100 ms, at most `boundMs`)
 * while another test process holds it, takes over a lock whose holder has died.
 */
export const withBuildLock = async <A>(work: () => Promise<A>, checkout = process.cwd(), boundMs = 600_000): Promise<A> => {
  const dir = lockDir(checkout)
  const deadline = Date.now() + boundMs
  for (;;) {
    const taken = await fs.mkdir(dir).then(() => true, (error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error
      return false
    })
    if (taken) break
    if (await stale(dir)) {
      await fs.rm(dir, { recursive: true, force: true })
      continue
    }
    if (Date.now() > deadline) throw new Error(`the build lock ${dir} was held for over ${boundMs / 1000} s`)
    await new Promise<void>((resolve) => setTimeout(resolve, 100))
  }
  try {
    await fs.writeFile(ownerFile(dir), String(process.pid))
    return await work()
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

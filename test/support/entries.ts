// The entry points the process tests start, as production runs them: compiled, from dist/ (the
// integration project's global setup builds it once, under the build lock, before any test file
// runs; an up-to-date tree builds nothing). A start from dist/ takes about a third of the CPU of
// one through tsx (measured: `--help` of the admin command 1.9 s against 5.0 s of CPU), and the
// suite starts some hundred processes.
import * as path from "node:path"

/** The source entries a test may start. */
export type Entry = "src/main.ts" | "jobs/main.ts" | "src/admin/main.ts"

/** `src/main.ts` → `dist/src/main.js` (relative to the checkout, as the entry was). */
export const compiledEntry = (entry: Entry): string => path.join("dist", entry.replace(/\.ts$/, ".js"))

/** The arguments of `node` that start `entry` (after the executable). */
export const nodeArgs = (entry: Entry, ...args: ReadonlyArray<string>): Array<string> => [compiledEntry(entry), ...args]

// The project's root folder, from the sources (tsx) and from the compiled build (dist/) alike.
import { existsSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The folder holding package.json, found upwards from this file (works from src/ and from dist/src/). */
export function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(path.join(dir, "package.json"))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`)
    dir = parent
  }
}

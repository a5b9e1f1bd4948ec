// The text rules of DECISIONS §1 for hostile input: every string of a body, a query or a path is
// valid UTF-8 without U+0000, and a JSON body nests at most 32 levels. Pure, shared by the edge,
// the batch item decoders and the request signer (which canonicalises query bytes, §2).
import type { Issue } from "./issue.js"

/** Containers (objects and arrays) a JSON body may nest, the body object itself included. */
export const MAX_JSON_DEPTH = 32

const HEX = /^[0-9A-Fa-f]{2}$/
const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * Percent-decodes to bytes: `%XX` is that byte, a `%` without two hex digits is itself, every
 * other character is its UTF-8 bytes; with `plusIsSpace`, `+` is a space (form encoding).
 */
export const percentDecodeBytes = (s: string, plusIsSpace: boolean): Uint8Array => {
  const out: Array<number> = []
  let literal = ""
  const flush = () => {
    if (literal !== "") {
      for (const b of utf8.encode(literal)) out.push(b)
      literal = ""
    }
  }
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!
    if (c === "%" && HEX.test(s.slice(i + 1, i + 3))) {
      flush()
      out.push(Number.parseInt(s.slice(i + 1, i + 3), 16))
      i += 2
    } else if (c === "+" && plusIsSpace) {
      flush()
      out.push(0x20)
    } else {
      literal += c
    }
  }
  flush()
  return Uint8Array.from(out)
}

/** The bytes as text when they are valid UTF-8, else undefined. */
export const decodeUtf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return strictUtf8.decode(bytes)
  } catch {
    return undefined
  }
}

/** A UTF-16 surrogate without its pair: JSON can escape one (`"\ud800"`), UTF-8 cannot hold it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why a text value is refused, or undefined when it is acceptable. */
export const textProblem = (s: string): string | undefined =>
  s.includes("\u0000")
    ? "must not contain the NUL character (U+0000)"
    : LONE_SURROGATE.test(s)
    ? "must be valid Unicode text (a lone surrogate cannot be UTF-8)"
    : undefined

const bytesProblem = (bytes: Uint8Array): string | undefined => {
  const text = decodeUtf8(bytes)
  return text === undefined ? "must be valid UTF-8" : textProblem(text)
}

/**
 * ASCII without NUL and without percent escapes: text no rule refuses, whatever it decodes to (the
 * common case of every request's path and query, answered without decoding them).
 */
const plainAscii = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 0 || c === 0x25 || c > 0x7f) return false
  }
  return true
}
const NO_ISSUES: ReadonlyArray<Issue> = []

/** Issues of the query parameters (raw query without `?`), each named by its parameter. */
export const queryIssues = (rawQuery: string): ReadonlyArray<Issue> => {
  if (plainAscii(rawQuery)) return NO_ISSUES
  const issues: Array<Issue> = []
  for (const part of rawQuery.split("&")) {
    if (part === "") continue
    const eq = part.indexOf("=")
    const rawName = eq === -1 ? part : part.slice(0, eq)
    const name = percentDecodeBytes(rawName, true)
    const nameText = decodeUtf8(name)
    const label = nameText !== undefined && textProblem(nameText) === undefined ? nameText : rawName
    const nameProblem = bytesProblem(name)
    if (nameProblem !== undefined) {
      issues.push({ path: label, message: `parameter name ${nameProblem}` })
      continue
    }
    const valueProblem = eq === -1 ? undefined : bytesProblem(percentDecodeBytes(part.slice(eq + 1), true))
    if (valueProblem !== undefined) issues.push({ path: label, message: valueProblem })
  }
  return issues
}

/** Issues of the path segments (percent escapes as bytes; `+` is a plus in a path). */
export const pathIssues = (path: string): ReadonlyArray<Issue> => {
  if (plainAscii(path)) return NO_ISSUES
  const issues: Array<Issue> = []
  for (const segment of path.split("/")) {
    const problem = segment.includes("%") ? bytesProblem(percentDecodeBytes(segment, false)) : textProblem(segment)
    if (problem !== undefined) issues.push({ path: "path", message: `path segment ${problem}` })
  }
  return issues
}

const renderKey = (prefix: string, key: string): string => (prefix === "" ? key : `${prefix}.${key}`)

/**
 * Issues of a parsed JSON value: strings (keys included) with U+0000, and nesting past
 * `maxDepth` containers. Recursion stops at the limit, so any depth is safe to check. `skip`
 * names top-level array fields whose items are checked one by one elsewhere (batches).
 */
export const jsonTextIssues = (
  value: unknown,
  options: { readonly maxDepth?: number; readonly prefix?: string; readonly skipItemsOf?: string | undefined } = {}
): ReadonlyArray<Issue> => {
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH
  const issues: Array<Issue> = []
  const visit = (v: unknown, path: string, depth: number, text: boolean): void => {
    if (issues.length >= 50) return
    if (typeof v === "string") {
      const problem = text ? textProblem(v) : undefined
      if (problem !== undefined) issues.push({ path: path === "" ? "body" : path, message: problem })
      return
    }
    if (v === null || typeof v !== "object") return
    if (depth + 1 > maxDepth) {
      issues.push({ path: path === "" ? "body" : path, message: `nests deeper than ${maxDepth} levels` })
      return
    }
    if (Array.isArray(v)) {
      // Batch items are checked for text one by one (a bad item fails only itself); depth still counts.
      const itemText = text &&
        !(depth === 1 && options.skipItemsOf !== undefined && path === renderKey(options.prefix ?? "", options.skipItemsOf))
      v.forEach((item, i) => visit(item, `${path}[${i}]`, depth + 1, itemText))
      return
    }
    for (const [key, item] of Object.entries(v)) {
      const keyProblem = text ? textProblem(key) : undefined
      if (keyProblem !== undefined) {
        issues.push({ path: renderKey(path, key.replaceAll("\u0000", "\\u0000")), message: `field name ${keyProblem}` })
        continue
      }
      visit(item, renderKey(path, key), depth + 1, text)
    }
  }
  visit(value, options.prefix ?? "", 0, true)
  return issues
}

/** Keeps a message readable when a hostile value is echoed inside it. */
export const clip = (message: string, max = 300): string => {
  const chars = [...message]
  return chars.length <= max ? message : `${chars.slice(0, max).join("")}… (${chars.length - max} more characters)`
}

/**
 * The message of a thrown value, for a log line or an error text. An error without a message of
 * its own (Effect's `ServeError` wrapping a listener's failure, say) is named by its tag or name,
 * with its cause's message: never an empty reason.
 */
export const errorMessage = (error: unknown): string => messageAt(error, 0)

const messageAt = (error: unknown, depth: number): string => {
  if (!(error instanceof Error)) return String(error)
  if (error.message !== "" || depth >= 4) return error.message
  const tag = (error as { readonly _tag?: unknown })._tag
  const name = typeof tag === "string" ? tag : error.name
  const cause = (error as { readonly cause?: unknown }).cause
  return cause === undefined || cause === null ? name : `${name}: ${messageAt(cause, depth + 1)}`
}

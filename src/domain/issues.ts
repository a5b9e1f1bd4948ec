// Validation issues as clients see them: one entry per path. A union (a literal set, a nullable
// field) fails once per member; those are folded into one readable message.
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

import type { Issue } from "./issue.js"
import { clip } from "./text.js"

export type { Issue } from "./issue.js"

const EXPECTED = /^Expected (.+), actual (.+)$/s

const foldMessages = (messages: ReadonlyArray<string>): string => {
  const unique = [...new Set(messages)]
  if (unique.length === 1) return unique[0]!
  // "Expected null" is the nullable branch; the other branch says what was wrong.
  const informative = unique.filter((m) => !/^Expected null, actual /.test(m))
  const kept = informative.length > 0 ? informative : unique
  if (kept.length === 1) return kept[0]!
  const parsed = kept.map((m) => EXPECTED.exec(m))
  if (parsed.every((m) => m !== null)) {
    const actual = parsed[0]![2]
    if (parsed.every((m) => m![2] === actual)) return `Expected ${parsed.map((m) => m![1]).join(" | ")}, actual ${actual}`
  }
  return kept.join("; ")
}

const NULL_BRANCH = /^Expected null, actual /

export const mergeIssues = (issues: ReadonlyArray<Issue>): ReadonlyArray<Issue> => {
  const byPath = new Map<string, Array<string>>()
  for (const { path, message } of issues) {
    const list = byPath.get(path)
    if (list) list.push(message)
    else byPath.set(path, [message])
  }
  const paths = [...byPath.keys()]
  // A nullable object or array that failed inside reports the null branch at its own path too;
  // the nested issues say what is wrong.
  const nestedBelow = (path: string) => paths.some((p) => p.startsWith(`${path}.`) || p.startsWith(`${path}[`))
  return [...byPath]
    .filter(([path, messages]) => !(messages.every((m) => NULL_BRANCH.test(m)) && nestedBelow(path)))
    .map(([path, messages]) => ({ path, message: foldMessages(messages) }))
}

/** A decode path as clients see it: `guests[3].age`, `requirement_tags.age_min` (DECISIONS §1). */
export const renderPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`
    else out += out === "" ? String(segment) : `.${String(segment)}`
  }
  return out
}

/** Effect 4 words a rejected value as "…, got X"; clients have always read "…, actual X". */
const GOT = /^(Expected [\s\S]*), got ([\s\S]*)$/

const v3Wording = (message: string): string => {
  if (message === "Missing key") return "is missing"
  const got = GOT.exec(message)
  return got === null ? message : `${got[1]}, actual ${got[2]}`
}

/**
 * Messages as clients read them: a schema's own message as it is, the built-in ones in the
 * wording of the contract ("Expected string, actual 1", "is missing"). The rejected value appears
 * when the decode ran with `reportInput: true` (as the contract's request decoding does).
 */
const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => v3Wording(SchemaIssue.defaultLeafHook(issue))
})

/** A decode failure as client issues: every path rendered, messages clipped, one entry per path. */
export const issuesOfSchemaError = (
  error: Schema.SchemaError | SchemaIssue.Issue,
  emptyPath: string
): ReadonlyArray<Issue> => {
  const issue = Schema.isSchemaError(error) ? error.issue : error
  return mergeIssues(
    formatIssues(issue).issues.map((i) => ({
      path: renderPath((i.path ?? []).map((segment) => (typeof segment === "object" ? segment.key : segment))) || emptyPath,
      message: clip(v3Wording(i.message))
    }))
  )
}

/** The former name (a v3 ParseError is a v4 SchemaError). */
export const issuesOfParseError = issuesOfSchemaError

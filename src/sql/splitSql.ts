// A migration file is a script of several statements; the native PostgreSQL driver speaks only the
// extended query protocol, which runs one statement per message, so a script is cut into its
// statements first. Semicolons count only outside quotes, dollar-quoted bodies and comments.

const DOLLAR_TAG = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/

/** The statements of a SQL script, in order, without their `;` (blank or comment-only ones dropped). */
export const splitSqlStatements = (script: string): ReadonlyArray<string> => {
  const statements: Array<string> = []
  let start = 0
  // Whether the current statement has anything besides blanks and comments.
  let content = false
  let i = 0
  const n = script.length
  const push = (end: number) => {
    const text = script.slice(start, end).trim()
    if (content && text !== "") statements.push(text)
    content = false
  }
  while (i < n) {
    const c = script[i]!
    const next = script[i + 1]
    if (c === "-" && next === "-") {
      const eol = script.indexOf("\n", i + 2)
      i = eol === -1 ? n : eol + 1
      continue
    }
    if (c === "/" && next === "*") {
      // Block comments nest in PostgreSQL.
      let depth = 1
      i += 2
      while (i < n && depth > 0) {
        if (script[i] === "/" && script[i + 1] === "*") {
          depth++
          i += 2
        } else if (script[i] === "*" && script[i + 1] === "/") {
          depth--
          i += 2
        } else i++
      }
      continue
    }
    if (c === ";") {
      push(i)
      start = i + 1
      i++
      continue
    }
    if (!/\s/.test(c)) content = true
    if (c === "'" || c === "\"") {
      // E'...' strings take backslash escapes; a doubled quote is a quote in every kind.
      const backslashes = c === "'" && i > 0 && /[eE]/.test(script[i - 1]!) && !/[A-Za-z0-9_]/.test(script[i - 2] ?? "")
      i++
      while (i < n) {
        if (backslashes && script[i] === "\\") i += 2
        else if (script[i] === c && script[i + 1] === c) i += 2
        else if (script[i] === c) break
        else i++
      }
      i++
      continue
    }
    if (c === "$" && !/[A-Za-z0-9_]/.test(script[i - 1] ?? "")) {
      const tag = DOLLAR_TAG.exec(script.slice(i, i + 64))?.[0]
      if (tag !== undefined) {
        const end = script.indexOf(tag, i + tag.length)
        i = end === -1 ? n : end + tag.length
        continue
      }
    }
    i++
  }
  push(n)
  return statements
}

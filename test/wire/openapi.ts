// What the served OpenAPI document says of each operation, independent of how its schemas are
// laid out (components, $refs, descriptions): method, path, operationId, the response statuses,
// the parameters (where and name) and the request body's media types. Plain TypeScript.

export interface OperationSummary {
  readonly method: string
  readonly path: string
  readonly operationId: string
  readonly statuses: ReadonlyArray<string>
  /** `in:name`, sorted (e.g. `path:id`, `query:page`, `header:Idempotency-Key`). */
  readonly parameters: ReadonlyArray<string>
  /** Media types of the request body, sorted; empty without a body. */
  readonly requestBody: ReadonlyArray<string>
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

type Json = Record<string, unknown>
const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** Follows a local `$ref` (`#/components/parameters/X`), for documents that share parameters. */
const resolve = (doc: Json, node: unknown): unknown => {
  let current = node
  for (let i = 0; i < 10 && isObject(current) && typeof current.$ref === "string"; i++) {
    const ref = current.$ref
    if (!ref.startsWith("#/")) break
    current = ref.slice(2).split("/").reduce<unknown>(
      (at, key) => (isObject(at) ? at[key.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined),
      doc
    )
  }
  return current
}

/** The operations of a document, sorted by path then method. */
export const summariseOpenApi = (document: unknown): ReadonlyArray<OperationSummary> => {
  if (!isObject(document) || !isObject(document.paths)) throw new Error("not an OpenAPI document: no paths")
  const out: Array<OperationSummary> = []
  for (const [path, item] of Object.entries(document.paths)) {
    if (!isObject(item)) continue
    const shared = Array.isArray(item.parameters) ? item.parameters : []
    for (const method of METHODS) {
      const op = item[method]
      if (!isObject(op)) continue
      const parameters = new Set<string>()
      for (const p of [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
        const param = resolve(document, p)
        if (isObject(param)) parameters.add(`${String(param.in)}:${String(param.name)}`)
      }
      const body = resolve(document, op.requestBody)
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: String(op.operationId),
        statuses: Object.keys(isObject(op.responses) ? op.responses : {}).sort(),
        parameters: [...parameters].sort(),
        requestBody: isObject(body) && isObject(body.content) ? Object.keys(body.content).sort() : []
      })
    }
  }
  return out.sort((
    a,
    b
  ) => (a.path < b.path ? -1 : a.path > b.path ? 1 : METHODS.indexOf(a.method.toLowerCase()) - METHODS.indexOf(b.method.toLowerCase())))
}

/** A path template as a pattern over concrete paths (`/guests/{id}` matches `/guests/12`). */
export const templatePattern = (template: string): RegExp =>
  new RegExp(`^${template.split(/\{[^}]+\}/).map((s) => s.replace(/[.*+?^$()|[\]\\]/g, "\\$&")).join("[^/]+")}$`)

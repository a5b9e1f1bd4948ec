// Card uploads: the multipart form is read from the exact bytes the signature covered (the edge
// kept them), with the platform's standard FormData parser.
import { Effect } from "effect"
import { BadRequest } from "../../schema/Errors.js"
import type { HttpServerRequest } from "@effect/platform"
import { textProblem } from "../domain/text.js"
import { RequestState } from "./RequestState.js"

export interface Upload {
  readonly file: { readonly bytes: Uint8Array; readonly name: string; readonly type: string } | undefined
  readonly fields: Readonly<Record<string, string>>
}

export const readUpload = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<Upload, BadRequest> => Effect.gen(function*() {
  const state = yield* RequestState
  const contentType = request.headers["content-type"] ?? ""
  const form = yield* Effect.tryPromise({
    try: () => new Response(state.body, { headers: { "content-type": contentType } }).formData(),
    catch: () => BadRequest.invalid([{ path: "body", message: "malformed multipart/form-data" }], "malformed multipart body")
  })
  let file: Upload["file"]
  const fields: Record<string, string> = {}
  for (const [key, value] of form.entries()) {
    if (typeof value === "string") {
      fields[key] = value
    } else if (key === "file" && file === undefined) {
      file = { bytes: new Uint8Array(yield* Effect.promise(() => value.arrayBuffer())), name: value.name, type: value.type }
    }
  }
  const textIssues = Object.entries(fields).flatMap(([key, value]) => {
    const problem = textProblem(value)
    return problem === undefined ? [] : [{ path: key, message: problem }]
  })
  if (textIssues.length > 0) return yield* BadRequest.invalid(textIssues)
  return { file, fields }
})

// What the edge needs to know of each endpoint, read once from the contract: the permission it
// requires and the body kind it accepts (for 415), keyed by router method and path.
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Context from "effect/Context"
import * as Option from "effect/Option"

import { OpenApiDef } from "../../schema/Api.js"
import { ItemwiseField, type Permission, PerRecordPermission, RequiredPermission } from "../../schema/Common.js"

export type BodyKind = "none" | "json" | "multipart"

export interface RouteInfo {
  readonly group: string
  readonly name: string
  readonly permission: Permission | undefined
  /** No permission of its own: each record is filtered by its own (PerRecordPermission). */
  readonly perRecord: boolean
  readonly body: BodyKind
  /** The top-level array of a batch body whose items are checked one by one. */
  readonly itemwise: string | undefined
}

export const routeKey = (method: string, path: string): string => `${method.toUpperCase()} ${path}`

const build = (): ReadonlyMap<string, RouteInfo> => {
  const table = new Map<string, RouteInfo>()
  HttpApi.reflect(OpenApiDef, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, payloads }) => {
      let body: BodyKind = "none"
      let itemwise: string | undefined
      if (endpoint.method !== "GET" && endpoint.method !== "DELETE" && endpoint.method !== "HEAD") {
        for (const [contentType, { ast }] of payloads) {
          body = contentType.includes("multipart") || HttpApiSchema.getMultipart(ast) !== undefined ? "multipart" : "json"
          const field = ast.annotations[ItemwiseField]
          if (typeof field === "string") itemwise = field
        }
      }
      table.set(routeKey(endpoint.method, endpoint.path), {
        group: group.identifier,
        name: endpoint.name,
        permission: Option.getOrUndefined(Context.getOption(mergedAnnotations, RequiredPermission)),
        perRecord: Option.isSome(Context.getOption(mergedAnnotations, PerRecordPermission)),
        body,
        itemwise
      })
    }
  })
  return table
}

export const ROUTES: ReadonlyMap<string, RouteInfo> = build()

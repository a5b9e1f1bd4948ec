// What the edge needs to know of each endpoint, read once from the contract: the permission it
// requires and the body kind it accepts (for 415), keyed by router method and path. The signed
// routes' middlewares read the same facts from the endpoint they wrap (`routeInfo`).
import * as Context from "effect/Context"
import * as Exit from "effect/Exit"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

import { OpenApiDef } from "../../schema/Api.js"
import { ActionLimit, CallerOnly, ComputedAnswer, ItemwiseField, PerRecordPermission, RequiredPermission } from "../../schema/Common.js"
import { Permission } from "../../schema/Permissions.js"
import type { LimitedAction } from "../domain/actionLimits.js"

export type BodyKind = "none" | "json" | "multipart"

export interface RouteInfo {
  readonly group: string
  readonly name: string
  readonly permission: Permission | undefined
  /** No permission of its own: each record is filtered by its own (PerRecordPermission). */
  readonly perRecord: boolean
  /** No permission of its own: it acts only on the calling client (CallerOnly, self-service). */
  readonly callerOnly: boolean
  readonly body: BodyKind
  /** The top-level array of a batch body whose items are checked one by one. */
  readonly itemwise: string | undefined
  /**
   * A JSON body whose fields are all optional: an empty body without Content-Type is taken as `{}`
   * (DECISIONS §1). Read from the payload schema (it accepts `{}`), not from a list.
   */
  readonly emptyBodyAsObject: boolean
  /** A POST that creates nothing (ComputedAnswer): its keyed answer is computed outside the key's transaction. */
  readonly computedAnswer: boolean
  /** The self-service limit its calls count against (ActionLimit). */
  readonly actionLimit: LimitedAction | undefined
}

export const routeKey = (method: string, path: string): string => `${method.toUpperCase()} ${path}`

const hasBody = (method: string): boolean => method !== "GET" && method !== "DELETE" && method !== "HEAD"

const bodyOf = (endpoint: HttpApiEndpoint.Top): BodyKind => {
  let body: BodyKind = "none"
  if (!hasBody(endpoint.method)) return body
  for (const [contentType, { encoding }] of endpoint.payload) {
    body = encoding._tag === "Multipart" || contentType.includes("multipart") ? "multipart" : "json"
  }
  return body
}

/** The JSON payload schema accepts `{}`: every field of the body is optional. */
const acceptsEmptyObject = (endpoint: HttpApiEndpoint.Top): boolean => {
  for (const [contentType, { schemas }] of endpoint.payload) {
    if (!contentType.includes("json")) continue
    const decodable = schemas as ReadonlyArray<Schema.Codec<unknown, unknown>>
    if (decodable.some((schema) => Exit.isSuccess(Schema.decodeUnknownExit(schema)({})))) return true
  }
  return false
}

/**
 * The permission an endpoint's annotation names, one of its areas' (schema/Permissions.ts): an
 * endpoint requiring a string no area claims could never be called, a defect stopped at start-up.
 */
const permissionOf = (
  group: HttpApiGroup.Top,
  endpoint: HttpApiEndpoint.Top,
  annotations: Context.Context<never>
): Permission | undefined => {
  const name = Option.getOrUndefined(Context.getOption(annotations, RequiredPermission))
  if (name === undefined || isPermission(name)) return name
  throw new Error(`${group.identifier}.${endpoint.identifier} requires ${name}, a permission no area claims (schema/Area.ts)`)
}

const isPermission = Schema.is(Permission)

const infoOf = (
  group: HttpApiGroup.Top,
  endpoint: HttpApiEndpoint.Top,
  annotations: Context.Context<never>
): RouteInfo => ({
  group: group.identifier,
  name: endpoint.identifier,
  permission: permissionOf(group, endpoint, annotations),
  perRecord: Option.isSome(Context.getOption(annotations, PerRecordPermission)),
  callerOnly: Option.isSome(Context.getOption(annotations, CallerOnly)),
  body: bodyOf(endpoint),
  itemwise: Context.getOrUndefined(annotations, ItemwiseField),
  emptyBodyAsObject: bodyOf(endpoint) === "json" && acceptsEmptyObject(endpoint),
  computedAnswer: Option.isSome(Context.getOption(annotations, ComputedAnswer)),
  actionLimit: Context.getOrUndefined(annotations, ActionLimit)
})

const byEndpoint = new WeakMap<HttpApiEndpoint.Top, RouteInfo>()

/** The facts of an endpoint as a middleware sees it (group and endpoint annotations), computed once. */
export const routeInfo = (group: HttpApiGroup.Top, endpoint: HttpApiEndpoint.Top): RouteInfo => {
  let info = byEndpoint.get(endpoint)
  if (info === undefined) {
    info = infoOf(group, endpoint, Context.merge(group.annotations, endpoint.annotations))
    byEndpoint.set(endpoint, info)
  }
  return info
}

const build = (): ReadonlyMap<string, RouteInfo> => {
  const table = new Map<string, RouteInfo>()
  HttpApi.reflect(OpenApiDef, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations }) => {
      table.set(routeKey(endpoint.method, endpoint.path), infoOf(group, endpoint, mergedAnnotations))
    }
  })
  return table
}

export const ROUTES: ReadonlyMap<string, RouteInfo> = build()

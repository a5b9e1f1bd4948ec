// The contract half of an area: its HttpApiGroup with the middlewares of how it is signed, and the
// names it owns (the permission strings its endpoints require, the resources a 404 of it names).
// Each area's schema file exports one (`export const CompaniesArea = Area.make(...)`); schema/Api.ts
// lists them once, in the document's order, and everything else (the OpenAPI document, the
// server's routes, src/areas.ts, the completeness test) derives from that list.
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"

import { Authenticated, CheckedInput, Idempotent, Permitted } from "./Auth.js"
import type { PermissionName } from "./Common.js"
import type { ResourceName } from "./Errors.js"

/**
 * How an area's requests are checked:
 * - `unsigned`: no signature (GET /time, the clock a client signs with);
 * - `permitted`: signed, each endpoint requires its `RequiredPermission`;
 * - `signed`: signed, without a permission string of its own (the events feed filters each record
 *   by its own permission, self-service acts only on the caller): no 403 permission_denied.
 */
export type Signing = "unsigned" | "permitted" | "signed"

type Permissions = ReadonlyArray<PermissionName>
type Resources = ReadonlyArray<ResourceName>

export interface Area<G extends HttpApiGroup.Constraint, P extends Permissions = Permissions, R extends Resources = Resources> {
  /** The group as the API adds it, with its signing middlewares. */
  readonly group: G
  readonly signing: Signing
  /** The permission strings this area owns (each in exactly one area). */
  readonly permissions: P
  /** The resource names (`data.resource` of a 404) this area owns (each in exactly one area). */
  readonly resources: R
}

export type Any = Area<HttpApiGroup.Constraint>

interface Names {
  readonly permissions: Permissions
  readonly resources: Resources
}

type Endpoints = HttpApiEndpoint.Constraint
type Group<Id extends string, E extends Endpoints, T extends boolean> = HttpApiGroup.HttpApiGroup<Id, E, T>

const area = <G extends HttpApiGroup.Constraint, S extends Signing, const N extends Names>(group: G, signing: S, names: N) => ({
  group,
  signing,
  ...names
})

/** An area whose endpoints need no signature. */
export const unsigned = <Id extends string, E extends Endpoints, T extends boolean, const N extends Names>(
  group: Group<Id, E, T>,
  names: N
) => area(group, "unsigned", names)

/**
 * A signed area whose every endpoint requires the permission it is annotated with. The last
 * middleware added runs outermost, so Authenticated provides the caller that the others require.
 */
export const permitted = <Id extends string, E extends Endpoints, T extends boolean, const N extends Names>(
  group: Group<Id, E, T>,
  names: N
) => area(group.middleware(Idempotent).middleware(CheckedInput).middleware(Permitted).middleware(Authenticated), "permitted", names)

/** A signed area that checks no permission string of its own (see `Signing`). */
export const signed = <Id extends string, E extends Endpoints, T extends boolean, const N extends Names>(
  group: Group<Id, E, T>,
  names: N
) => area(group.middleware(Idempotent).middleware(CheckedInput).middleware(Authenticated), "signed", names)

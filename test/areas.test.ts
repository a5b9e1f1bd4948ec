// An area is registered once (docs/contributor.md, "Adding an area"): its contract half in
// schema/ (listed in schema/Api.ts's AREAS), its runtime half in src/areas.ts. Read from the
// OpenAPI document: every group in it has exactly one of each, every permission string and
// resource name belongs to exactly one area, each endpoint requires a permission of its own
// area (and only a `permitted` area's endpoints do), and every operation of the served document
// reaches its handler (no route-not-found, no method-not-allowed).
import { expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { describe } from "vitest"

import { AREAS, OpenApiDef, RESOURCE_NAMES } from "../schema/Api.js"
import { RequiredPermission } from "../schema/Common.js"
import { Permission } from "../schema/Permissions.js"
import { AREA_COMMANDS, AREA_RUNTIMES } from "../src/areas.js"
import { ResourceName } from "../src/domain/errors.js"
import { type RouteInfo, routeInfo, ROUTES } from "../src/http/routes.js"
import { TestServer, testServerLayer } from "./support/harness.js"

interface Operation {
  readonly operationId: string
}

const document = OpenApi.fromApi(OpenApiDef) as unknown as { paths: Record<string, Record<string, Operation>> }

const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ path, method, group: op.operationId.split(".")[0]! }))
)

/** The groups the document has, each once. */
const documentGroups = [...new Set(operations.map((op) => op.group))].sort()

const sorted = (names: ReadonlyArray<string>) => [...names].sort()

/** How many areas own each name of `all` (`of` picks an area's names). */
const owners = (all: ReadonlyArray<string>, of: (area: (typeof AREAS)[number]) => ReadonlyArray<string>) =>
  Object.fromEntries(all.map((name) => [name, AREAS.filter((area) => of(area).includes(name)).length]))

describe("each area is registered once", () => {
  it("every group of the API document has exactly one contract area (schema/Api.ts)", () => {
    expect(documentGroups.length).toBeGreaterThan(10)
    expect(sorted(AREAS.map((area) => area.group.identifier))).toEqual(documentGroups)
  })

  it("every group of the API document has exactly one runtime registration (src/areas.ts)", () => {
    expect(sorted(Object.keys(AREA_RUNTIMES))).toEqual(documentGroups)
  })

  it("every permission string belongs to exactly one area, and an area claims only permission strings", () => {
    expect(owners(Permission.literals, (area) => area.permissions)).toEqual(
      Object.fromEntries(Permission.literals.map((name) => [name, 1]))
    )
    const claimed = AREAS.flatMap((area) => area.permissions)
    expect(sorted(claimed)).toEqual(sorted(Permission.literals))
  })

  it("every resource name belongs to exactly one area, and the document's 404 names exactly the areas' resources", () => {
    expect(RESOURCE_NAMES.length).toBeGreaterThan(10)
    expect(owners(RESOURCE_NAMES, (area) => area.resources)).toEqual(Object.fromEntries(RESOURCE_NAMES.map((name) => [name, 1])))
    expect(new Set(RESOURCE_NAMES).size).toBe(RESOURCE_NAMES.length)
    const notFound = (document as unknown as {
      components: { schemas: { NotFoundResponse: { properties: { data: { properties: { resource: { enum: Array<string> } } } } } } }
    }).components.schemas.NotFoundResponse
    expect(sorted(notFound.properties.data.properties.resource.enum)).toEqual(sorted(RESOURCE_NAMES))
  })

  it("a resource name of the wrong form is refused by the domain's schema; its form is all the domain checks", () => {
    const isName = Schema.is(ResourceName)
    expect(RESOURCE_NAMES.every(isName)).toBe(true)
    for (const bad of ["", "Guest", "guest ", "work-wechat", "_guest", "guest_", "guest__x", "gu\u0000est"]) {
      expect(isName(bad), bad).toBe(false)
    }
  })

  it("a permitted area's endpoints each require one of its own permissions; a signed or unsigned area's require none", () => {
    const byGroup = new Map(AREAS.map((area) => [area.group.identifier as string, area]))
    const seen = new Set<string>()
    for (const route of ROUTES.values()) {
      const area = byGroup.get(route.group)
      expect(area, route.group).toBeDefined()
      seen.add(route.group)
      if (area!.signing === "permitted") {
        expect(area!.permissions as ReadonlyArray<string>, `${route.group}.${route.name}`).toContain(route.permission)
      } else {
        expect(route.permission, `${route.group}.${route.name}`).toBeUndefined()
      }
    }
    expect(sorted([...seen])).toEqual(documentGroups)
  })

  it("an endpoint requiring a permission string no area names is refused when its route is built", () => {
    const infoOf = (group: string, name: string, permission: string) => {
      const api = HttpApi.make("probe").add(
        HttpApiGroup.make(group).add(HttpApiEndpoint.get(name, `/${name}`).annotate(RequiredPermission, permission as "open:x:read"))
      )
      const infos: Array<RouteInfo> = []
      HttpApi.reflect(api, { onGroup: () => {}, onEndpoint: ({ endpoint, group }) => infos.push(routeInfo(group, endpoint)) })
      return infos[0]
    }
    expect(() => infoOf("orphans", "orphan", "open:orphan:read")).toThrow(
      /orphans\.orphan requires open:orphan:read, a permission no area claims/
    )
    expect(infoOf("claimed", "claimed", "open:company:read")?.permission).toBe("open:company:read")
  })

  it("the areas' admin commands have distinct names", () => {
    const names = AREA_COMMANDS.map((command) => command.name)
    expect(names.length).toBeGreaterThan(0)
    expect(new Set(names).size).toBe(names.length)
  })
})

/** A path of the document with every parameter filled in. */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, "1")

layer(testServerLayer())("every registered area is served", (it) => {
  it.effect("every operation of the served document reaches its route: none answers route-not-found or method-not-allowed", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const client = yield* HttpClient.HttpClient
      const served = (yield* client.get(`${baseUrl}/api/open/v1/openapi.json`).pipe(
        Effect.flatMap((response) => response.json)
      )) as unknown as { paths: Record<string, Record<string, Operation>> }
      const servedOperations = Object.entries(served.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => ({ path, method }))
      )
      expect(servedOperations.length).toBe(operations.length)
      const unreached: Array<string> = []
      for (const { method, path } of servedOperations) {
        // Unsigned: a signed route answers 401 and the system's answers itself; only a route
        // without handlers would answer 404 `route` or 405.
        const response = yield* client.execute(
          HttpClientRequest.make(method.toUpperCase() as "GET")(`${baseUrl}${concrete(path)}`)
        )
        const body = (yield* response.json) as { data?: { resource?: string } }
        if (response.status === 405 || (response.status === 404 && body.data?.resource === "route")) {
          unreached.push(`${method.toUpperCase()} ${path}: ${response.status}`)
        }
      }
      expect(unreached).toEqual([])
    }))
})

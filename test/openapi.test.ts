// The contract is published unsigned: the OpenAPI 3.1 document and an offline docs page that
// list every endpoint; and every signed endpoint declares the permission it needs.
import { expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ALL_PERMISSIONS } from "../schema/Common.js"
import { ROUTES } from "../src/http/routes.js"
import { TestServer, testServerLayer } from "./support/harness.js"

const ENDPOINTS = [
  ["get", "/api/open/v1/time"],
  ["get", "/api/open/v1/matchmakers"],
  ["get", "/api/open/v1/matchmakers/ids"],
  ["get", "/api/open/v1/matchmakers/{id}"],
  ["post", "/api/open/v1/matchmakers"],
  ["put", "/api/open/v1/matchmakers/{id}"],
  ["get", "/api/open/v1/companies"],
  ["get", "/api/open/v1/companies/{id}"],
  ["post", "/api/open/v1/companies"],
  ["put", "/api/open/v1/companies/{id}"]
] as const

layer(testServerLayer())("published contract", (it) => {
  it.effect("GET /api/open/v1/openapi.json is an unsigned OpenAPI 3.1 document with every endpoint", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const spec = (yield* Effect.promise(() => fetch(`${baseUrl}/api/open/v1/openapi.json`).then((r) => r.json()))) as {
        openapi: string
        paths: Record<string, Record<string, { parameters: Array<{ name: string }> }>>
      }
      expect(spec.openapi).toBe("3.1.0")
      for (const [method, path] of ENDPOINTS) expect(spec.paths[path]?.[method], `${method} ${path}`).toBeDefined()
      // Every route the server serves is documented.
      for (const key of ROUTES.keys()) {
        const [method, path] = key.split(" ") as [string, string]
        const openApiPath = path.replace(/:(\w+)/g, "{$1}")
        expect(spec.paths[openApiPath]?.[method.toLowerCase()], key).toBeDefined()
      }
      expect(ROUTES.size).toBeGreaterThan(50)
      expect(JSON.stringify(spec)).not.toContain("HttpApiDecodeError")
      const params = spec.paths["/api/open/v1/matchmakers"].get.parameters.map((p: { name: string }) => p.name)
      expect(params).toEqual(expect.arrayContaining(["X-Signature", "keyword", "has_guests", "page_size"]))
    }))

  it.effect("GET /docs is a self-contained page (no external scripts) embedding the document", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const res = yield* Effect.promise(() => fetch(`${baseUrl}/docs`))
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toMatch(/text\/html/)
      const html = yield* Effect.promise(() => res.text())
      expect(html).not.toMatch(/<script[^>]+src=/)
      for (const [, path] of ENDPOINTS) expect(html).toContain(path)
    }))
})

it("every signed endpoint declares one of SPEC's permission strings", () => {
  for (const [key, info] of ROUTES) {
    if (key.endsWith("/time")) continue
    expect(ALL_PERMISSIONS, key).toContain(info.permission)
  }
})

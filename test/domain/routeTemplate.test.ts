// Route templates for metric labels: a request is labelled with the template it matched (static
// segments before parameters, as the router chooses), never with its raw path.
import { describe, expect, it } from "@effect/vitest"

import { methodLabel, routeMatcher, UNMATCHED } from "../../src/observability/routeTemplate.js"

const match = routeMatcher([
  "GET /api/open/v1/guests",
  "GET /api/open/v1/guests/:id",
  "PUT /api/open/v1/guests/:id",
  "PUT /api/open/v1/guests/batch",
  "GET /api/open/v1/guests/card-task/:task_id",
  "GET /api/open/v1/matchmakers/ids",
  "GET /api/open/v1/matchmakers/:id",
  "DELETE /api/open/v1/work-groups/:id/matchmakers/:matchmaker_id",
  "GET /healthz"
])

describe("route templates", () => {
  it.each([
    ["GET", "/api/open/v1/guests", "/api/open/v1/guests"],
    ["GET", "/api/open/v1/guests?page=2&page_size=10", "/api/open/v1/guests"],
    ["GET", "/api/open/v1/guests/", "/api/open/v1/guests"],
    ["GET", "/api/open/v1/guests?next=a/b/c", "/api/open/v1/guests"],
    ["GET", "/api/open/v1/guests/123", "/api/open/v1/guests/:id"],
    ["GET", "/api/open/v1/guests/123/", "/api/open/v1/guests/:id"],
    ["PUT", "/api/open/v1/guests/123", "/api/open/v1/guests/:id"],
    ["PUT", "/api/open/v1/guests/batch", "/api/open/v1/guests/batch"],
    ["GET", "/api/open/v1/guests/card-task/abc", "/api/open/v1/guests/card-task/:task_id"],
    ["GET", "/api/open/v1/matchmakers/ids", "/api/open/v1/matchmakers/ids"],
    ["GET", "/api/open/v1/matchmakers/7", "/api/open/v1/matchmakers/:id"],
    // A literal segment matches whole: a longer or shorter one is a parameter's value, or no route.
    ["GET", "/api/open/v1/matchmakers/idsx", "/api/open/v1/matchmakers/:id"],
    ["GET", "/api/open/v1/matchmakers/id", "/api/open/v1/matchmakers/:id"],
    ["GET", "/api/open/v1/guestsx", UNMATCHED],
    ["GET", "/api/open/v1/guest", UNMATCHED],
    ["DELETE", "/api/open/v1/work-groups/1/matchmakers/2", "/api/open/v1/work-groups/:id/matchmakers/:matchmaker_id"],
    ["HEAD", "/healthz", "/healthz"],
    ["get", "/healthz", "/healthz"],
    // Unknown paths, methods and shapes all share one label.
    ["DELETE", "/api/open/v1/guests", UNMATCHED],
    ["GET", "/api/open/v1/guests/1/2", UNMATCHED],
    ["GET", "/api/open/v1/guests//", UNMATCHED],
    ["GET", "/wp-admin/login.php", UNMATCHED],
    ["GET", "/", UNMATCHED],
    ["OPTIONS", "*", UNMATCHED],
    ["GET", "", UNMATCHED]
  ])("%s %s is labelled %s", (method, url, template) => {
    expect(match(method, url)).toBe(template)
  })

  it.each([["get", "GET"], ["PATCH", "PATCH"], ["PROPFIND", "OTHER"], ["", "OTHER"]])("method %j is labelled %s", (method, label) => {
    expect(methodLabel(method)).toBe(label)
  })
})

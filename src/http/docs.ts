// GET /docs: the offline API reference page (Scalar, inlined, no external script), embedding the
// OpenAPI document. The same page as `HttpApiScalar.layer`, but the 6.5 MB Scalar bundle is loaded
// on the first request for the page instead of at start: that layer holds the bundle's module source,
// its string and the finished page (about 20 MB of heap) in every API process, read or not.
import { createRequire } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../schema/Api.js"

const DOCS_PATH = "/docs"

/** JSON inside a <script> element: `<` and the JS line terminators escaped (as the platform's page does). */
const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/[\u2028\u2029]/g, (c) => c === "\u2028" ? "\\u2028" : "\\u2029")

const escapeHtml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const escapeAttribute = (text: string): string => escapeHtml(text).replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/**
 * The Scalar bundle the platform ships (`@effect/platform`'s internal `httpApiScalar` module), found
 * beside the public `HttpApiScalar` module, so it is the version the platform was released with.
 */
const scalarBundle = Effect.promise(async () => {
  const publicModule = createRequire(import.meta.url).resolve("@effect/platform/HttpApiScalar")
  const internal = path.join(path.dirname(publicModule), "internal", "httpApiScalar.js")
  const esm = internal.replace(`${path.sep}cjs${path.sep}`, `${path.sep}esm${path.sep}`)
  const module: { readonly javascript: string } = await import(pathToFileURL(esm).href)
  return module.javascript
})

const page = (javascript: string): string => {
  const spec = OpenApi.fromApi(OpenApiDef)
  const description = spec.info.description
    ? `<meta name="description" content="${escapeAttribute(spec.info.description)}"/>
    <meta name="og:description" content="${escapeAttribute(spec.info.description)}"/>`
    : ""
  return `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(spec.info.title)}</title>
    ${description}
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" type="application/json">
      ${scriptJson(spec)}
    </script>
    <script>
      document.getElementById('api-reference').dataset.configuration = JSON.stringify(${
    scriptJson({ _integration: "html", hideTestRequestButton: true })
  })
    </script>
    <script>${javascript}</script>
  </body>
</html>`
}

/** The page is built per request (rare) and not kept: only the bundle's module stays loaded once read. */
export const DocsLive = HttpApiBuilder.Router.use((router) =>
  router.get(DOCS_PATH, Effect.map(scalarBundle, (javascript) => HttpServerResponse.html(page(javascript))))
)

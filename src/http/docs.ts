// GET /docs: the offline API reference page (Scalar, inlined, no external script), embedding the
// OpenAPI document. The same page as `HttpApiScalar.layer`, but the 6.5 MB Scalar bundle is loaded
// on the first request for the page instead of at start: that layer holds the bundle's module source,
// its string and the finished page (about 20 MB of heap) in every API process, read or not.
import { createRequire } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as OpenApi from "effect/http-api/OpenApi"

import { OpenApiDef } from "../../schema/Api.js"

export const DOCS_PATH = "/docs"

/** The admin command that creates a client with every permission, as a person pastes it. */
export const CREATE_CLIENT_COMMAND = "npm run -s admin -- clients create --name my-app --permissions all"

/**
 * The docs page's address for a person, from the address the API listens on: a wildcard host
 * (0.0.0.0, ::) is not one a browser opens, so it becomes localhost.
 */
export const docsUrl = (listening: string): string => {
  const url = new URL(listening)
  if (url.hostname === "0.0.0.0" || url.hostname === "[::]") url.hostname = "localhost"
  url.pathname = DOCS_PATH
  return url.href
}

/** The line after `Listening on …`: where to read the reference and how to get credentials to sign with. */
export const nextStepsLine = (listening: string): string =>
  `API reference: ${docsUrl(listening)} · create a client to sign requests with: ${CREATE_CLIENT_COMMAND}`

/** JSON inside a <script> element: `<` and the JS line terminators escaped (as the platform's page does). */
const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/[\u2028\u2029]/g, (c) => c === "\u2028" ? "\\u2028" : "\\u2029")

const escapeHtml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const escapeAttribute = (text: string): string => escapeHtml(text).replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/**
 * The Scalar bundle effect ships (the internal module beside the public `HttpApiScalar`), so it is
 * the version the library was released with. The package does not export its internals, so the
 * module is found by its file.
 */
const scalarBundle = Effect.promise(async () => {
  const publicModule = createRequire(import.meta.url).resolve("effect/http-api/HttpApiScalar")
  const internal = path.join(path.dirname(publicModule), "internal", "httpApiScalar.js")
  const module: { readonly javascript: string } = await import(pathToFileURL(internal).href)
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
    <div id="api-reference-container"></div>
    <script>${javascript}</script>
    <script>
      window.Scalar.createApiReference(document.getElementById('api-reference-container'), {
        ...${scriptJson({ _integration: "html", hideTestRequestButton: true })},
        content: ${scriptJson(spec)}
      })
    </script>
  </body>
</html>`
}

/** The page is built per request (rare) and not kept: only the bundle's module stays loaded once read. */
export const DocsLive = HttpRouter.add(
  "GET",
  DOCS_PATH,
  Effect.map(scalarBundle, (javascript) => HttpServerResponse.html(page(javascript)))
)

// GET /docs: the offline API reference page (Scalar, inlined, no external script, no web font),
// embedding the OpenAPI document. Its "Try it" requests are signed in the page (docsSigning.ts)
// with the app key and secret typed into the page's signing box, through Scalar's onBeforeRequest
// hook. Effect's `HttpApiScalar` has no place for that hook or the box, so the page is made here,
// with the Scalar bundle kept in vendor/scalar (its README says where it comes from). The 3 MB
// bundle is read on the first request for the page, not at start, and the page is built per request.
import { readFile } from "node:fs/promises"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Layer from "effect/Layer"

import { OpenApiDef } from "../../schema/Api.js"
import { projectRoot } from "../root.js"
import { SIGNING_SCRIPT } from "./docsSigning.js"

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

/** Scalar's browser bundle (vendor/scalar/README.md). */
const SCALAR_BUNDLE = path.join(projectRoot(), "vendor", "scalar", "standalone.js")

/** What Scalar's authentication fields show: the signing box fills the four headers. */
const SIGNED_IN_PAGE = "signed in this page (box at the bottom right)"
const signedInPage = {
  securitySchemes: Object.fromEntries(["AppKey", "Timestamp", "Nonce", "Signature"].map((scheme) => [scheme, { value: SIGNED_IN_PAGE }]))
}

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
    <style>
      #signing { position: fixed; right: 12px; bottom: 12px; z-index: 100000; max-width: 22rem; padding: 8px 12px;
        font: 13px/1.4 system-ui, sans-serif; background: #fff; color: #111; border: 1px solid #999; border-radius: 6px;
        box-shadow: 0 2px 8px rgba(0, 0, 0, .25) }
      #signing summary { cursor: pointer; font-weight: 600 }
      #signing label { display: block; margin-top: 6px }
      #signing input { width: 100%; box-sizing: border-box; font: 12px monospace }
      #signing p { margin: 6px 0 0; color: #444 }
    </style>
  </head>
  <body>
    <details id="signing" open>
      <summary>Sign "Try it" requests</summary>
      <form autocomplete="off" onsubmit="return false">
        <label>App key <input id="signing-app-key" placeholder="ak_…" spellcheck="false" /></label>
        <label>App secret <input id="signing-app-secret" type="password" spellcheck="false" /></label>
      </form>
      <p id="signing-status">Unsigned: requests answer 401 until both are set.</p>
      <p>Kept in this page only and never sent: each request gets its own X-App-Key, X-Timestamp, X-Nonce
        and X-Signature (they replace the authentication fields). Create a client with
        <code>${escapeHtml(CREATE_CLIENT_COMMAND)}</code>.</p>
    </details>
    <div id="api-reference-container"></div>
    <script>${javascript}</script>
    <script>${SIGNING_SCRIPT}</script>
    <script>
      (() => {
        const field = (id) => document.getElementById(id)
        const credentials = () => ({ appKey: field('signing-app-key').value.trim(), appSecret: field('signing-app-secret').value })
        const showStatus = () => {
          const { appKey, appSecret } = credentials()
          field('signing-status').textContent = appKey !== '' && appSecret !== ''
            ? 'Signing as ' + appKey + '.'
            : 'Unsigned: requests answer 401 until both are set.'
        }
        field('signing-app-key').addEventListener('input', showStatus)
        field('signing-app-secret').addEventListener('input', showStatus)
        window.Scalar.createApiReference(field('api-reference-container'), {
          ...${scriptJson({ _integration: "html", hideTestRequestButton: false, withDefaultFonts: false, authentication: signedInPage })},
          content: ${scriptJson(spec)},
          onBeforeRequest: async ({ request }) => {
            const { appKey, appSecret } = credentials()
            if (appKey === '' || appSecret === '') {
              // The fields' filler is no credential: an unsigned request goes without the headers.
              const headers = new Headers(request.headers)
              for (const [name, value] of [...headers]) if (value === ${scriptJson(SIGNED_IN_PAGE)}) headers.delete(name)
              return { request: new Request(request, { headers }) }
            }
            return { request: await window.OpenApiSigning.signRequest(request, appKey, appSecret) }
          }
        })
      })()
    </script>
  </body>
</html>`
}

/**
 * The page is built per request (rare) and not kept; the bundle, once read, is kept (read again it
 * would cost its 3 MB each time).
 */
export const DocsLive = Layer.unwrap(
  Effect.map(
    Effect.cached(Effect.promise(() => readFile(SCALAR_BUNDLE, "utf8"))),
    (scalarBundle) => HttpRouter.add("GET", DOCS_PATH, Effect.map(scalarBundle, (javascript) => HttpServerResponse.html(page(javascript))))
  )
)

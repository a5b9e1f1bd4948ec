// The docs page in a real browser (Debian's Chromium over the DevTools protocol): "Try it" on
// GET /matchmakers is a 401 missing_credentials while the signing box is empty, and a 200 envelope
// once a client's app key and secret are typed into it; no request the page sends carries the
// secret; and nothing the page loads or sends leaves the server (no CDN, no web font). Skipped,
// saying so, only when no Chromium is installed (.ci/run installs it).
import { afterAll, beforeAll, describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { type Browser, findChromium, launchBrowser, type Page } from "./support/browser.js"
import { createCredentials, TestServer, testServerLayer } from "./support/harness.js"

const chromium = findChromium()
if (chromium === undefined) {
  console.warn("docs page browser test skipped: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)")
}

const LIST = "/api/open/v1/matchmakers"
const TRY_IT = `Test Request(get ${LIST})`

const buttonExpression = (text: string) =>
  `Array.from(document.querySelectorAll('button')).find((b) => b.textContent.trim().startsWith(${JSON.stringify(text)}))`

/** Clicks the button whose text starts with `text`, once it is there. */
const click = async (page: Page, text: string) => {
  await page.waitFor(`the button ${text}`, `!!${buttonExpression(text)}`)
  await page.evaluate(`${buttonExpression(text)}.click()`)
}

/** Types into an input as a person would (focus, then text input events). */
const typeInto = async (page: Page, id: string, text: string) => {
  await page.evaluate(`document.getElementById(${JSON.stringify(id)}).focus()`)
  await page.send("Input.insertText", { text })
}

/** The page's requests to the list endpoint, with their responses as they arrive. */
const listExchanges = (page: Page) => {
  const sent = page.events.filter((e) => e.method === "Network.requestWillBeSent" && String(e.params["request"].url).includes(LIST))
  return sent.map((e) => ({
    requestId: String(e.params["requestId"]),
    headers: e.params["request"].headers as Record<string, string>,
    status: page.events.find((r) => r.method === "Network.responseReceived" && r.params["requestId"] === e.params["requestId"])
      ?.params["response"].status as number | undefined
  }))
}

const waitForExchange = async (page: Page, count: number) => {
  const deadline = Date.now() + 30_000
  for (;;) {
    const exchanges = listExchanges(page)
    if (exchanges.length >= count && exchanges[count - 1]!.status !== undefined) return exchanges[count - 1]!
    if (Date.now() > deadline) throw new Error(`no answer to request ${count} of ${LIST}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const responseJson = async (page: Page, requestId: string) => {
  const { body } = await page.send("Network.getResponseBody", { requestId })
  return JSON.parse(body as string) as { code: number; message: string; data: Record<string, unknown> }
}

describe.skipIf(chromium === undefined)("the docs page in Chromium", () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchBrowser(chromium!)
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
  })

  // The server's clock starts at the real now, so the browser's timestamps are in its window.
  layer(testServerLayer(), { timeout: 120_000 })((it) => {
    it.effect(
      "Try it on GET /matchmakers: 401 missing_credentials unsigned, a 200 envelope signed with the typed key and secret, which no request carries; the page reaches no host but the server",
      () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* TestServer
          const { appKey, appSecret } = yield* createCredentials()
          const page = browser.page
          yield* Effect.promise(async () => {
            await page.send("Network.enable")
            await page.send("Page.enable")
            await page.send("Page.navigate", { url: `${baseUrl}/docs#tag/matchmakers/GET${LIST}` })
            await page.waitFor("the docs page to render", `!!${buttonExpression(TRY_IT)}`, 60_000)
          })

          // Unsigned: the authentication fields' filler is not sent; the server asks for the headers.
          const unsigned = yield* Effect.promise(async () => {
            await click(page, TRY_IT)
            await click(page, "Send")
            return waitForExchange(page, 1)
          })
          expect(unsigned.status).toBe(401)
          expect(Object.keys(unsigned.headers).map((h) => h.toLowerCase())).not.toContain("x-signature")
          expect(yield* Effect.promise(() => responseJson(page, unsigned.requestId))).toMatchObject({
            code: 401,
            data: { error: "missing_credentials" }
          })

          // Signed with what a person types into the page's signing box.
          const signed = yield* Effect.promise(async () => {
            await typeInto(page, "signing-app-key", appKey)
            await typeInto(page, "signing-app-secret", appSecret)
            await page.waitFor(
              "the box to say it signs",
              `document.getElementById('signing-status').textContent.includes(${JSON.stringify(appKey)})`
            )
            await click(page, "Send")
            return waitForExchange(page, 2)
          })
          const envelope = yield* Effect.promise(() => responseJson(page, signed.requestId))
          expect(signed.status, JSON.stringify(envelope)).toBe(200)
          expect(signed.headers).toMatchObject({ "x-app-key": appKey })
          expect(signed.headers["x-signature"]).toMatch(/^[0-9a-f]{64}$/)
          expect(envelope).toMatchObject({ code: 200, message: "ok", data: { list: expect.any(Array), total: expect.any(Number) } })
          // The page shows the answer.
          yield* Effect.promise(() => page.waitFor("the page to show 200 OK", "document.body.innerText.includes('200 OK')"))

          // Nothing the page sent (URL, headers, body; the headers as they went on the wire) holds the secret.
          const sent = page.events.filter((e) =>
            e.method === "Network.requestWillBeSent" || e.method === "Network.requestWillBeSentExtraInfo" ||
            e.method === "Network.webSocketFrameSent"
          )
          expect(sent.length).toBeGreaterThan(2)
          expect(JSON.stringify(sent)).not.toContain(appSecret)

          // Offline: everything the page loaded or sent (scripts, styles, fonts, images, requests)
          // came from this server or from the page itself (data:, blob:); no web font from a CDN.
          const origins = page.events
            .filter((e) => e.method === "Network.requestWillBeSent")
            .map((e) => new URL(String(e.params["request"].url)))
            .filter((url) => url.protocol !== "data:" && url.protocol !== "blob:")
            .map((url) => url.origin)
          expect(origins.length).toBeGreaterThan(2)
          expect([...new Set(origins)]).toEqual([new URL(baseUrl).origin])
        }),
      120_000
    )
  })
})

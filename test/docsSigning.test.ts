// The docs page's in-browser signer (src/http/docsSigning.ts), run as the page runs it (a plain
// script in a fresh JavaScript context with WebCrypto): it reproduces every shared signing vector,
// its MD5 agrees with Node's on every block boundary, and a request it signs is one the server's
// signer accepts, with the secret in no header, URL or body. (test/docsBrowser.test.ts drives the
// page itself in Chromium.)
import { createHash } from "node:crypto"
import * as vm from "node:vm"

import { describe, expect, it } from "@effect/vitest"

import { liveSigner } from "../src/auth/Signer.js"
import { canonicalString } from "../src/domain/signing.js"
import { SIGNING_SCRIPT } from "../src/http/docsSigning.js"
import vectors from "./fixtures/signing-vectors.json" with { type: "json" }

interface PageSigning {
  readonly md5Hex: (bytes: Uint8Array) => string
  readonly sortedQuery: (raw: string) => string
  readonly stringToSign: (parts: Record<string, string>) => string
  readonly hmacHex: (secret: string, text: string) => Promise<string>
  readonly signRequest: (request: Request, appKey: string, appSecret: string) => Promise<Request>
}

/** The script evaluated in a context of its own, with only what a browser page gives it. */
const pageSigning = (): PageSigning => {
  const context = vm.createContext({ TextEncoder, crypto: globalThis.crypto, URL, Headers, Request })
  vm.runInContext(SIGNING_SCRIPT, context)
  return (context as { OpenApiSigning: PageSigning }).OpenApiSigning
}

describe("the docs page's signer", () => {
  const page = pageSigning()

  for (const c of vectors.cases) {
    it(`reproduces the vector: ${c.description}`, async () => {
      const body = new Uint8Array(Buffer.from(c.body_base64, "base64"))
      expect(page.sortedQuery(c.raw_query)).toBe(c.sorted_query)
      expect(page.md5Hex(body)).toBe(c.body_md5)
      const text = page.stringToSign({
        method: c.method,
        path: c.path,
        rawQuery: c.raw_query,
        appKey: vectors.app_key,
        timestamp: String(vectors.timestamp),
        nonce: c.nonce,
        bodyMd5: c.body_md5
      })
      expect(text).toBe(c.string_to_sign)
      expect(await page.hmacHex(vectors.app_secret, text)).toBe(c.signature)
    })
  }

  it("its MD5 is Node's for every length around the 64-byte block boundaries", () => {
    for (let n = 0; n <= 200; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n * 7) & 0xff)
      expect(page.md5Hex(bytes), `length ${n}`).toBe(createHash("md5").update(bytes).digest("hex"))
    }
  })

  it("its sorted query is the server's for odd queries (bad escapes, UTF-8, repeats, empty parts)", async () => {
    const { sortedQuery } = await import("../src/domain/signing.js")
    for (const raw of ["a=%zz&b=%&c=%4", "x=1&&x=0&x", "名=值&k=a+b%2Bc", "%FF=%fe&~._-=!*'()", "z=é&a=%C3%A9"]) {
      expect(page.sortedQuery(raw), raw).toBe(sortedQuery(raw))
    }
  })

  it("a request it signs verifies with the server's signer, and the secret is in no header, URL or body", async () => {
    const secret = "9".repeat(64)
    const body = JSON.stringify({ name: "张三", note: "a+b c" })
    const request = new Request("http://localhost:8080/api/open/v1/guests?page=1&keyword=%E5%BC%A0&page_size=5", {
      method: "POST",
      headers: { "content-type": "application/json", "X-Signature": "placeholder" },
      body
    })
    const signed = await page.signRequest(request, "ak_docs", secret)
    const headers = Object.fromEntries(signed.headers)
    expect(headers).toMatchObject({ "x-app-key": "ak_docs", "content-type": "application/json" })
    expect(headers["x-nonce"]).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(Math.abs(Number(headers["x-timestamp"]) - Date.now() / 1000)).toBeLessThan(5)
    const sentBody = await signed.text()
    expect(sentBody).toBe(body)
    const text = canonicalString({
      method: "POST",
      path: "/api/open/v1/guests",
      rawQuery: "page=1&keyword=%E5%BC%A0&page_size=5",
      appKey: "ak_docs",
      timestamp: headers["x-timestamp"]!,
      nonce: headers["x-nonce"]!,
      bodyMd5: liveSigner.bodyMd5(new TextEncoder().encode(body))
    })
    expect(liveSigner.verify(secret, text, headers["x-signature"]!)).toBe(true)
    expect(JSON.stringify([signed.url, headers, sentBody])).not.toContain(secret)
  })
})

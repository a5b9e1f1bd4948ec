// The docs page's request signer (DECISIONS §2), as the plain browser script the page inlines: the
// "Try it" requests are signed in the page with the app key and secret a person types into it. The
// secret is only ever the HMAC key: it is not stored, not put in any header, URL or body. WebCrypto
// gives HMAC-SHA256 and the nonce; it has no MD5, so a small one (RFC 1321) is here. The canonical
// string is built as src/domain/signing.ts builds it; test/docsSigning.test.ts runs this script
// against the shared signing vectors.

/**
 * Defines `globalThis.OpenApiSigning`: `md5Hex(bytes)`, `sortedQuery(raw)`, `stringToSign(parts)`,
 * `hmacHex(secret, text)` and `signRequest(request, appKey, appSecret)` (a signed copy of a Fetch
 * `Request`). Plain ES2020, no imports: it runs in any browser and in Node alike.
 */
export const SIGNING_SCRIPT = String.raw`(() => {
  const utf8 = new TextEncoder()
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

  // MD5 (RFC 1321) of bytes, lower-case hex.
  const SHIFTS = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]
  const K = Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 4294967296) >>> 0)
  const md5Hex = (bytes) => {
    const n = bytes.length
    const blocks = ((n + 8) >>> 6) + 1
    const m = new Uint32Array(blocks * 16)
    for (let i = 0; i < n; i++) m[i >> 2] |= bytes[i] << ((i % 4) * 8)
    m[n >> 2] |= 0x80 << ((n % 4) * 8)
    m[blocks * 16 - 2] = (n * 8) >>> 0
    m[blocks * 16 - 1] = Math.floor(n / 0x20000000)
    let a0 = 0x67452301, b0 = 0xefcdab89 | 0, c0 = 0x98badcfe | 0, d0 = 0x10325476
    for (let off = 0; off < m.length; off += 16) {
      let a = a0, b = b0, c = c0, d = d0
      for (let i = 0; i < 64; i++) {
        let f, g
        if (i < 16) { f = (b & c) | (~b & d); g = i }
        else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) % 16 }
        else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) % 16 }
        else { f = c ^ (b | ~d); g = (7 * i) % 16 }
        const s = SHIFTS[(i >> 4) * 4 + (i % 4)]
        const t = (a + f + K[i] + m[off + g]) | 0
        a = d; d = c; c = b
        b = (b + ((t << s) | (t >>> (32 - s)))) | 0
      }
      a0 = (a0 + a) | 0; b0 = (b0 + b) | 0; c0 = (c0 + c) | 0; d0 = (d0 + d) | 0
    }
    const out = new DataView(new ArrayBuffer(16))
    ;[a0, b0, c0, d0].forEach((word, i) => out.setUint32(i * 4, word >>> 0, true))
    return hex(new Uint8Array(out.buffer))
  }

  // sorted_query: form-decode each name and value to bytes ("+" is a space, "%XX" a byte, a "%"
  // without two hex digits itself), re-encode the bytes by RFC 3986, sort by name then value.
  const decodeForm = (s) => {
    const out = []
    let literal = ""
    const flush = () => { for (const b of utf8.encode(literal)) out.push(b); literal = "" }
    for (let i = 0; i < s.length; i++) {
      const c = s[i]
      if (c === "%" && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) {
        flush(); out.push(parseInt(s.slice(i + 1, i + 3), 16)); i += 2
      } else if (c === "+") {
        flush(); out.push(0x20)
      } else {
        literal += c
      }
    }
    flush()
    return out
  }
  const rfc3986 = (bytes) => bytes.map((b) =>
    (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x5f || b === 0x2e || b === 0x7e
      ? String.fromCharCode(b)
      : "%" + b.toString(16).toUpperCase().padStart(2, "0")).join("")
  const sortedQuery = (raw) => {
    const pairs = []
    for (const part of raw.split("&")) {
      if (part === "") continue
      const eq = part.indexOf("=")
      const name = eq === -1 ? part : part.slice(0, eq)
      const value = eq === -1 ? "" : part.slice(eq + 1)
      pairs.push([rfc3986(decodeForm(name)), rfc3986(decodeForm(value))])
    }
    pairs.sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    return pairs.map(([n, v]) => n + "=" + v).join("&")
  }

  const stringToSign = (p) =>
    [p.method.toUpperCase(), p.path, sortedQuery(p.rawQuery), p.appKey, p.timestamp, p.nonce, p.bodyMd5].join("\n")

  const hmacHex = async (secret, text) => {
    const key = await crypto.subtle.importKey("raw", utf8.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    return hex(new Uint8Array(await crypto.subtle.sign("HMAC", key, utf8.encode(text))))
  }

  // 32 characters of [A-Za-z0-9_-].
  const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
  const newNonce = () => Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => ALPHABET[b & 63]).join("")

  const signRequest = async (request, appKey, appSecret) => {
    const url = new URL(request.url)
    const method = request.method.toUpperCase()
    const body = new Uint8Array(await request.clone().arrayBuffer())
    const timestamp = String(Math.floor(Date.now() / 1000))
    const nonce = newNonce()
    const text = stringToSign({ method, path: url.pathname, rawQuery: url.search.slice(1), appKey, timestamp, nonce, bodyMd5: md5Hex(body) })
    const headers = new Headers(request.headers)
    headers.set("X-App-Key", appKey)
    headers.set("X-Timestamp", timestamp)
    headers.set("X-Nonce", nonce)
    headers.set("X-Signature", await hmacHex(appSecret, text))
    return new Request(request.url, {
      method,
      headers,
      body: method === "GET" || method === "HEAD" ? undefined : body,
      signal: request.signal
    })
  }

  globalThis.OpenApiSigning = { md5Hex, sortedQuery, stringToSign, hmacHex, signRequest }
})()`

// Request signing of DECISIONS §2 in plain Node (node:crypto only), for the wire corpus: it must
// not share code with the service, so that it keeps signing the same way whatever the service is
// built on. Checked against the shared vectors (test/fixtures/signing-vectors.json) by wire.test.ts.
import { createHash, createHmac } from "node:crypto"

const HEX = "0123456789ABCDEF"

const isHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)

/** Form-decodes one name or value to bytes: `+` is a space, `%XX` a byte, a lone `%` itself. */
const formDecode = (text: string): Uint8Array => {
  const raw = Buffer.from(text, "utf8")
  const out: Array<number> = []
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!
    if (c === 0x2b) out.push(0x20)
    else if (c === 0x25 && i + 2 < raw.length && isHex(raw[i + 1]!) && isHex(raw[i + 2]!)) {
      out.push(parseInt(String.fromCharCode(raw[i + 1]!, raw[i + 2]!), 16))
      i += 2
    } else out.push(c)
  }
  return Uint8Array.from(out)
}

/** RFC 3986 encoding of bytes: A-Z a-z 0-9 - _ . ~ stay, every other byte is %XX (upper-case hex). */
const rfc3986 = (bytes: Uint8Array): string => {
  let out = ""
  for (const b of bytes) {
    const keep = (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) || b === 0x2d ||
      b === 0x5f || b === 0x2e || b === 0x7e
    out += keep ? String.fromCharCode(b) : `%${HEX[b >> 4]}${HEX[b & 15]}`
  }
  return out
}

/** The `sorted_query` line from a raw query string (without `?`). */
export const sortedQuery = (rawQuery: string): string => {
  if (rawQuery === "") return ""
  const pairs = rawQuery.split("&").filter((part) => part !== "").map((part) => {
    const eq = part.indexOf("=")
    const name = eq === -1 ? part : part.slice(0, eq)
    const value = eq === -1 ? "" : part.slice(eq + 1)
    return [rfc3986(formDecode(name)), rfc3986(formDecode(value))] as const
  })
  // Byte order: the encoded text is ASCII, so comparing UTF-16 code units is comparing bytes.
  pairs.sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
  return pairs.map(([n, v]) => `${n}=${v}`).join("&")
}

export const md5Hex = (body: Uint8Array): string => createHash("md5").update(body).digest("hex")

export interface SigningInput {
  readonly method: string
  /** The path as sent, without the query. */
  readonly path: string
  readonly rawQuery: string
  readonly appKey: string
  readonly timestamp: string
  readonly nonce: string
  readonly body: Uint8Array
  /** The sorted_query line as given instead of computed (to sign as a client that gets it wrong). */
  readonly sortedQueryLine?: string
}

export const stringToSign = (input: SigningInput): string =>
  [
    input.method.toUpperCase(),
    input.path,
    input.sortedQueryLine ?? sortedQuery(input.rawQuery),
    input.appKey,
    input.timestamp,
    input.nonce,
    md5Hex(input.body)
  ].join("\n")

export const signature = (appSecret: string, input: SigningInput): string =>
  createHmac("sha256", Buffer.from(appSecret, "utf8")).update(Buffer.from(stringToSign(input), "utf8")).digest("hex")

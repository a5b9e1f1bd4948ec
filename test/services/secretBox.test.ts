// Secrets at rest (DECISIONS §13): the SecretBox's sealed form, its binding to a place, its keys
// (SECRET_KEYS, SECRET_KEY) and the values of the first scheme; and the settings that configure it.
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"

import { keyIdOf, makeSecretBox, type Place, placeOf, UnopenableSecret } from "../../src/auth/SecretBox.js"
import { derivedKeyId, singleKey } from "../../src/auth/secretKeys.js"
import { appConfig } from "../../src/Config.js"
import { configProblems } from "../../src/startup.js"

const A = "ab".repeat(32)
const B = "cd".repeat(32)
const C = "ef".repeat(32)
const older = { kid: "older", keyHex: A }
const newer = { kid: "newer", keyHex: B }

// Sealed by the service before key ids (src/auth/SecretBox.ts of that time), under A and under B.
const V1_UNDER_A = "v1:XWyBCFzcc9Bc+Db6jdVxynHNEL2oB5yXoK+AZPOg1E8CLgVn/1TAjktqEP4y7gQsHU5D0dsPbb1cDA=="
const V1_UNDER_B = "v1:5+PlGB8YBhLjQQ6U2EKMCwkqgpA0aVnkQ7qpg2g1qxW2gUFdGaIllZwz0uihDKDNOQdfag=="

const current = placeOf("clients.secret_enc", "ak_one")
const answer = placeOf("idempotency_keys.response_sealed", "ak_one", "rotate-1")

const refusal = (f: () => unknown): string => {
  try {
    f()
  } catch (error) {
    expect(error).toBeInstanceOf(UnopenableSecret)
    return (error as Error).message
  }
  return "opened"
}

describe("SecretBox", () => {
  const box = makeSecretBox([newer, older])

  it.each([
    ["an app secret", "3f9c0e1d2b4a59687766554433221100ffeeddccbbaa99887766554433221100", current],
    ["a webhook secret", "whsec_K1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v=", placeOf("clients.webhook_secret_enc", "ak_one")],
    ["an empty text", "", placeOf("clients.prev_secret_enc", "ak_one")],
    ["a kept answer", `{"code":0,"message":"ok","data":{"app_secret":"feed"}}`, answer],
    ["text beyond ASCII", "密钥 🔑", current]
  ])("%s opens at its place as it was sealed, under the first key's id", (_, plain, at) => {
    const sealed = box.seal(plain, at)
    expect(sealed).toMatch(/^v2:newer:[A-Za-z0-9+/]+=*$/)
    expect(sealed).not.toContain(plain === "" ? "\u0000" : plain)
    expect(box.open(sealed, at)).toBe(plain)
    expect(keyIdOf(sealed)).toBe("newer")
  })

  it("bytes round trip exactly, and two seals of one value differ (a fresh IV each time)", () => {
    const bytes = new Uint8Array([0, 255, 1, 254, 0xc3, 0x28])
    const first = box.sealBytes(bytes, answer)
    expect(Array.from(box.openBytes(first, answer))).toEqual(Array.from(bytes))
    expect(box.sealBytes(bytes, answer)).not.toBe(first)
  })

  const moves: ReadonlyArray<readonly [string, Place]> = [
    ["another client's row", placeOf("clients.secret_enc", "ak_two")],
    ["the previous secret's column of the same row", placeOf("clients.prev_secret_enc", "ak_one")],
    ["the webhook secret's column", placeOf("clients.webhook_secret_enc", "ak_one")],
    ["a kept answer", placeOf("idempotency_keys.response_sealed", "ak_one")],
    ["a row key that only joins differently", placeOf("clients.secret_enc", "ak_", "one")]
  ]
  it.each(moves)("a value moved to %s does not open there", (_, elsewhere) => {
    const sealed = box.seal("s3cret", current)
    expect(refusal(() => box.open(sealed, elsewhere))).toMatch(/sealed for another row or column/)
  })

  it("kept answers are bound to both the client and the key", () => {
    const sealed = box.seal("body", answer)
    expect(refusal(() => box.open(sealed, placeOf("idempotency_keys.response_sealed", "ak_one", "rotate-2")))).not.toBe("opened")
    expect(refusal(() => box.open(sealed, placeOf("idempotency_keys.response_sealed", "ak_two", "rotate-1")))).not.toBe("opened")
  })

  it.each([
    ["a flipped ciphertext byte", (raw: Buffer) => void (raw[raw.length - 1]! ^= 1)],
    ["a flipped tag byte", (raw: Buffer) => void (raw[12]! ^= 1)],
    ["a flipped IV byte", (raw: Buffer) => void (raw[0]! ^= 1)]
  ])("a value with %s does not open", (_, tamper) => {
    const sealed = box.seal("s3cret", current)
    const raw = Buffer.from(sealed.slice("v2:newer:".length), "base64")
    tamper(raw)
    expect(refusal(() => box.open(`v2:newer:${raw.toString("base64")}`, current))).toMatch(/altered/)
  })

  it.each([
    ["cut short", (s: string) => s.slice(0, 20)],
    ["without its scheme", (s: string) => s.slice(3)],
    ["plain text", () => "3f9c0e1d2b4a5968"]
  ])("a value %s does not open", (_, mangle) => {
    expect(refusal(() => box.open(mangle(box.seal("s3cret", current)), current))).not.toBe("opened")
  })

  it("a value whose key id is swapped for another configured one does not open", () => {
    const sealed = box.seal("s3cret", current)
    expect(refusal(() => box.open(sealed.replace("v2:newer:", "v2:older:"), current))).toMatch(/under key older/)
  })

  it("each key id opens with its own key: a value sealed under the older key opens while both are configured", () => {
    const olderBox = makeSecretBox([older])
    const sealed = olderBox.seal("from before", current)
    expect(sealed.startsWith("v2:older:")).toBe(true)
    expect(box.open(sealed, current)).toBe("from before")
    expect(makeSecretBox([newer, older]).open(box.seal("now", current), current)).toBe("now")
  })

  it("an unknown key id fails clearly, naming the id and the settings", () => {
    const sealed = box.seal("s3cret", current)
    expect(refusal(() => makeSecretBox([older]).open(sealed, current))).toBe(
      "cannot open clients.secret_enc of [\"ak_one\"]: sealed under key id newer, which is not configured (SECRET_KEYS, SECRET_KEY)"
    )
  })

  it("v1 values (no key id, no binding) still open under whichever configured key sealed them", () => {
    expect(box.open(V1_UNDER_A, current)).toBe("a secret sealed before key ids")
    expect(box.open(V1_UNDER_B, placeOf("clients.webhook_secret_enc", "ak_nine"))).toBe("sealed by the second key")
    expect(keyIdOf(V1_UNDER_A)).toBe("v1")
    expect(refusal(() => makeSecretBox([{ kid: "other", keyHex: C }]).open(V1_UNDER_A, current))).toMatch(
      /a v1 value that no configured key/
    )
  })

  it("reseal leaves a value under the sealing key alone and re-seals the others (v1 included) under it, at the same place", () => {
    const now = box.seal("now", current)
    expect(box.reseal(now, current)).toBeUndefined()
    const fromOlder = box.reseal(makeSecretBox([older]).seal("before", current), current)!
    expect(fromOlder.startsWith("v2:newer:")).toBe(true)
    expect(makeSecretBox([newer]).open(fromOlder, current)).toBe("before")
    const fromV1 = box.reseal(V1_UNDER_A, current)!
    expect(makeSecretBox([newer]).open(fromV1, current)).toBe("a secret sealed before key ids")
  })

  it("move opens at one place and seals for another (a current secret becoming the previous one)", () => {
    const prev = placeOf("clients.prev_secret_enc", "ak_one")
    const moved = box.move(box.seal("s3cret", current), current, prev)
    expect(box.open(moved, prev)).toBe("s3cret")
    expect(refusal(() => box.open(moved, current))).not.toBe("opened")
  })
})

describe("the master key settings", () => {
  const parse = (env: Record<string, string>) => Effect.runSyncExit(appConfig.parse(ConfigProvider.fromEnv({ env })))
  const keysOf = (env: Record<string, string>) => {
    const exit = parse(env)
    if (Exit.isFailure(exit)) throw new Error(`refused: ${String(exit.cause)}`)
    return Redacted.value(exit.value.secretKeys).map((k) => k.kid)
  }
  const problemOf = (env: Record<string, string>) => {
    const exit = parse(env)
    if (Exit.isSuccess(exit)) return "accepted"
    const error = exit.cause.reasons.find((r) => r._tag === "Fail")
    if (error === undefined || error._tag !== "Fail") return "defect"
    return configProblems(error.error).map(({ problem, setting }) => `${setting}: ${problem}`).join("; ")
  }

  it.each([
    ["SECRET_KEY alone seals under an id derived from it, the same at every start", { SECRET_KEY: A }, [derivedKeyId(A)]],
    ["SECRET_KEYS in its order, the first sealing", { SECRET_KEYS: `newer:${B}, older:${A}` }, ["newer", "older"]],
    ["SECRET_KEY beside SECRET_KEYS is one more key that opens", { SECRET_KEYS: `newer:${B}`, SECRET_KEY: A }, ["newer", derivedKeyId(A)]],
    ["SECRET_KEY already listed in SECRET_KEYS is not added twice", { SECRET_KEYS: `newer:${B},older:${A}`, SECRET_KEY: A }, [
      "newer",
      "older"
    ]]
  ])("%s", (_, env, kids) => {
    expect(keysOf(env)).toEqual(kids)
  })

  it("the derived id is stable and tells keys apart", () => {
    expect(derivedKeyId(A)).toMatch(/^k[0-9a-f]{8}$/)
    expect(derivedKeyId(A.toUpperCase())).toBe(derivedKeyId(A))
    expect(derivedKeyId(B)).not.toBe(derivedKeyId(A))
    expect(singleKey(A)).toEqual({ kid: derivedKeyId(A), keyHex: A })
  })

  it.each([
    ["neither set", {}, /^SECRET_KEY: SECRET_KEY is not set; `npm start` keeps one/],
    ["SECRET_KEY not hex", { SECRET_KEY: "not-hex" }, /^SECRET_KEY: expected 64 hexadecimal characters$/],
    ["an entry without its id", { SECRET_KEYS: `newer:${B},${A}` }, /^SECRET_KEYS: entry 2 of 2: expected KID:KEY/],
    ["a short key", { SECRET_KEYS: `newer:${B.slice(2)}` }, /^SECRET_KEYS: entry 1 of 1: expected KID:KEY/],
    ["an id with a space", { SECRET_KEYS: `new er:${B}` }, /^SECRET_KEYS: entry 1 of 1/],
    ["an id listed twice", { SECRET_KEYS: `k:${B},k:${A}` }, /^SECRET_KEYS: key id k is listed twice$/],
    [
      "one key under two ids",
      { SECRET_KEYS: `newer:${B},older:${B.toUpperCase()}` },
      /^SECRET_KEYS: entries newer and older hold the same key$/
    ],
    [
      "SECRET_KEY's derived id naming another key",
      { SECRET_KEYS: `${derivedKeyId(A)}:${B}`, SECRET_KEY: A },
      /^SECRET_KEYS: key id k[0-9a-f]{8} is SECRET_KEY's/
    ]
  ])("%s is refused, naming the setting and never a key", (_, env, message) => {
    const problem = problemOf(env)
    expect(problem).toMatch(message)
    expect(problem).not.toContain(A.slice(0, 16))
    expect(problem).not.toContain(B.slice(0, 16))
  })
})

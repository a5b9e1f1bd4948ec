// `npm run bench` (sealing): what sealing a kept Idempotency-Key answer costs (src/auth/SecretBox.ts:
// AES-256-GCM with the place as associated data, base64 with the key id) beside a floor measured in
// the same run: bare AES-256-GCM of the same bytes, raw output. No database.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

import { makeSecretBox, placeOf } from "../src/auth/SecretBox.js"
import { singleKey } from "../src/auth/secretKeys.js"
import { log } from "./support.js"

const keyHex = randomBytes(32).toString("hex")
const box = makeSecretBox([singleKey(keyHex)])
const key = Buffer.from(keyHex, "hex")
const at = placeOf("idempotency_keys.response_sealed", "ak_0123456789abcdef", "6f1c2a7e-5b1d-4c8e-9a57-0d3b2f4e6a81")

const floorSeal = (plain: Uint8Array) => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, iv)
  return { iv, ct: Buffer.concat([cipher.update(plain), cipher.final()]), tag: cipher.getAuthTag() }
}
const floorOpen = (s: ReturnType<typeof floorSeal>) => {
  const decipher = createDecipheriv("aes-256-gcm", key, s.iv)
  decipher.setAuthTag(s.tag)
  return Buffer.concat([decipher.update(s.ct), decipher.final()])
}

/** Microseconds per call, the median of 5 rounds of `n` calls. */
const perCall = (n: number, f: () => unknown): number => {
  const rounds: Array<number> = []
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < n; i++) f()
    rounds.push(Number(process.hrtime.bigint() - t0) / n / 1000)
  }
  return rounds.sort((a, b) => a - b)[2]!
}

for (const size of [300, 2_000, 64 * 1024]) {
  const answer = new TextEncoder().encode(JSON.stringify({ code: 0, message: "success", data: { app_secret: "x".repeat(size) } })).slice(
    0,
    size
  )
  const n = size > 10_000 ? 2_000 : 20_000
  const sealed = box.sealBytes(answer, at)
  const floor = floorSeal(answer)
  const seal = perCall(n, () => box.sealBytes(answer, at))
  const open = perCall(n, () => box.openBytes(sealed, at))
  const bareSeal = perCall(n, () => floorSeal(answer))
  const bareOpen = perCall(n, () => floorOpen(floor))
  log(
    `sealing ${size} B: seal ${seal.toFixed(1)} µs, open ${open.toFixed(1)} µs (floor ${bareSeal.toFixed(1)} / ${
      bareOpen.toFixed(1)
    } µs); stored ${sealed.length} characters`
  )
}

// Secrets at rest (DECISIONS §2): AES-256-GCM under the master key SECRET_KEY. Stored form is
// `v1:` + base64(iv | tag | ciphertext); plaintext never leaves this module except to its caller.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

import { AppConfig } from "../Config.js"

export interface SecretBoxShape {
  readonly seal: (plain: string) => string
  readonly open: (sealed: string) => string
}

export class SecretBox extends Context.Service<SecretBox, SecretBoxShape>()("Auth/SecretBox") {}

export const makeSecretBox = (keyHex: string): SecretBoxShape => {
  const key = Buffer.from(keyHex, "hex")
  if (key.length !== 32) throw new Error("SECRET_KEY must be 64 hexadecimal characters")
  return {
    seal: (plain) => {
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", key, iv)
      const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
      return "v1:" + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString("base64")
    },
    open: (sealed) => {
      if (!sealed.startsWith("v1:")) throw new Error("unknown sealed secret format")
      const raw = Buffer.from(sealed.slice(3), "base64")
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12))
      decipher.setAuthTag(raw.subarray(12, 28))
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
    }
  }
}

export const SecretBoxLive = Layer.effect(
  SecretBox,
  Effect.map(AppConfig, (c) => makeSecretBox(Redacted.value(c.secretKey)))
)

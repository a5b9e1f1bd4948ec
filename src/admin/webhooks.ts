// Operator recovery of webhook delivery (DECISIONS §9): `webhooks deliveries [--client APP_KEY]
// [--status pending|succeeded|failed] [--limit N]`, `webhooks redeliver ID`, `webhooks redeliver
// --client APP_KEY --since YYYY-MM-DDTHH:MM:SS`, `webhooks test APP_KEY`.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { DeliveryStatus } from "../repos/WebhooksRepo.js"
import { WebhookCommandError, Webhooks } from "../services/Webhooks.js"

export const WEBHOOKS_USAGE = `  webhooks deliveries [--client APP_KEY] [--status pending|succeeded|failed] [--limit N]
  webhooks redeliver ID | webhooks redeliver --client APP_KEY --since YYYY-MM-DDTHH:MM:SS
  webhooks test APP_KEY`

const fail = (message: string) => Effect.fail(new WebhookCommandError({ message }))

const stringFlag = (flags: ReadonlyMap<string, string | true>, name: string): string | undefined => {
  const v = flags.get(name)
  return typeof v === "string" ? v : undefined
}

/** `webhooks <command> ...`: positional are the words after the command. */
export const webhooksCommand = (
  command: string,
  positional: ReadonlyArray<string>,
  flags: ReadonlyMap<string, string | true>
) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    switch (command) {
      case "deliveries": {
        const status = stringFlag(flags, "status")
        if (status !== undefined && !Schema.is(DeliveryStatus)(status)) {
          return yield* fail(`--status must be pending, succeeded or failed, got ${status}`)
        }
        const limitText = stringFlag(flags, "limit") ?? "50"
        if (!/^\d+$/.test(limitText) || Number(limitText) < 1) return yield* fail(`--limit must be a positive integer, got ${limitText}`)
        return yield* webhooks.deliveries({ appKey: stringFlag(flags, "client"), status, limit: Math.min(Number(limitText), 1000) })
      }
      case "redeliver": {
        const id = positional[0]
        if (id !== undefined) {
          if (!/^\d+$/.test(id)) return yield* fail(`ID must be a delivery id (a positive integer), got ${id}`)
          return yield* webhooks.redeliver(Number(id))
        }
        const client = stringFlag(flags, "client")
        const since = stringFlag(flags, "since")
        if (client === undefined || since === undefined) {
          return yield* fail(`redeliver takes a delivery ID, or --client APP_KEY --since YYYY-MM-DDTHH:MM:SS\n\n${WEBHOOKS_USAGE}`)
        }
        return yield* webhooks.redeliverSince(client, since)
      }
      case "test": {
        const appKey = positional[0]
        if (appKey === undefined) return yield* fail(`APP_KEY is required\n\n${WEBHOOKS_USAGE}`)
        return yield* webhooks.test(appKey)
      }
      default:
        return yield* fail(`unknown command: webhooks ${command}\n\n${WEBHOOKS_USAGE}`)
    }
  })

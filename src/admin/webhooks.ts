// Operator recovery of webhook delivery (DECISIONS §9): `webhooks deliveries [--client APP_KEY]
// [--status pending|succeeded|failed] [--limit N]`, `webhooks redeliver ID`, `webhooks redeliver
// --client APP_KEY --since YYYY-MM-DDTHH:MM:SS`, `webhooks test APP_KEY`.
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

import { DeliveryStatus } from "../repos/WebhooksRepo.js"
import { Webhooks } from "../services/Webhooks.js"
import { answering, idArgument, positiveIntFlag, usage, withFlags } from "./cli.js"

/** The command that gives a client's webhook its URL and events. */
const turnOn = (appKey: string) => `clients webhook ${appKey} --url URL --events ...`

/** At most this many deliveries are listed, whatever --limit says. */
const MAX_LIMIT = 1000

const deliveries = answering("deliveries", {
  client: Flag.String("client").pipe(Flag.withDescription("only this app_key's"), Flag.optional),
  status: Flag.Literals("status", DeliveryStatus.literals).pipe(Flag.optional),
  limit: positiveIntFlag("limit").pipe(Flag.withDescription(`at most this many (up to ${MAX_LIMIT})`), Flag.withDefault(50))
}, ({ client, limit, status }) =>
  Effect.flatMap(Webhooks, (w) =>
    w.deliveries({
      appKey: Option.getOrUndefined(client),
      status: Option.getOrUndefined(status),
      limit: Math.min(limit, MAX_LIMIT)
    }))).pipe(Command.withDescription("Deliveries with their attempts, newest first"))

const redeliver = answering(
  "redeliver",
  {
    id: idArgument("ID").pipe(Argument.withDescription("a delivery id"), Argument.optional),
    client: Flag.String("client").pipe(Flag.withDescription("every delivery of this app_key…"), Flag.optional),
    since: Flag.String("since").pipe(Flag.withDescription("…since YYYY-MM-DDTHH:MM:SS"), Flag.optional)
  },
  Effect.fnUntraced(function*({ client, id, since }) {
    const webhooks = yield* Webhooks
    if (Option.isSome(id)) return yield* webhooks.redeliver(id.value)
    if (Option.isNone(client) || Option.isNone(since)) {
      return yield* usage("redeliver takes a delivery ID, or --client APP_KEY --since YYYY-MM-DDTHH:MM:SS")
    }
    const appKey = client.value
    return yield* webhooks.redeliverSince(appKey, since.value).pipe(
      withFlags({ since: "--since" }),
      Effect.catchTag("WebhookOff", () => usage(`the webhook of ${appKey} is off; turn it on first (${turnOn(appKey)})`))
    )
  })
).pipe(Command.withDescription("Send a delivery again: ID, or --client APP_KEY --since YYYY-MM-DDTHH:MM:SS"))

const test = answering("test", { appKey: Argument.String("APP_KEY") }, ({ appKey }) =>
  Effect.flatMap(Webhooks, (w) => w.test(appKey)).pipe(
    Effect.catchTag("WebhookOff", () => usage(`${appKey} has no webhook URL (${turnOn(appKey)})`))
  )).pipe(Command.withDescription("Send a test event to the client's webhook"))

export const webhooksCommand = Command.make("webhooks").pipe(
  Command.withDescription("Webhook deliveries: list, redeliver, test"),
  Command.withSubcommands([deliveries, redeliver, test])
)

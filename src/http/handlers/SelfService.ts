// Self-service (DECISIONS §12): each handler calls one service method for the calling client.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { Clients } from "../../services/Clients.js"
import { Webhooks } from "../../services/Webhooks.js"

export const SelfServiceHandlers = HttpApiBuilder.group(OpenApiDef, "selfService", (handlers) =>
  Effect.gen(function*() {
    const clients = yield* Clients
    const webhooks = yield* Webhooks
    return handlers
      .handle("getWebhook", () => Effect.flatMap(Caller, (caller) => clients.webhookSettings(caller.appKey)))
      .handle("updateWebhook", ({ payload }) => Effect.flatMap(Caller, (caller) => clients.updateWebhook(caller.appKey, payload)))
      .handle("rotateWebhookSecret", () => Effect.flatMap(Caller, (caller) => clients.rotateOwnWebhookSecret(caller.appKey)))
      .handle("testWebhook", () => Effect.flatMap(Caller, (caller) => webhooks.sendTest(caller)))
      .handle("listDeliveries", ({ query }) => Effect.flatMap(Caller, (caller) => webhooks.ownDeliveries(caller, query)))
      .handle("redeliver", ({ params }) => Effect.flatMap(Caller, (caller) => webhooks.redeliverOwn(caller, params.id)))
      .handle("redeliverSince", ({ payload }) => Effect.flatMap(Caller, (caller) => webhooks.redeliverOwnSince(caller, payload)))
      .handle("rotateCredentials", () => Effect.flatMap(Caller, (caller) => clients.rotateOwnSecret(caller.appKey)))
  }))

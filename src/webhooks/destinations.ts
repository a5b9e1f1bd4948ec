// Where webhooks may go (DECISIONS §13), over the resolver (the `Dns` service: the system's in the
// processes, a fake in tests): the check of a URL when it is set (PUT /webhook, `clients webhook
// --url`), and each attempt's resolution, whose checked addresses the sender connects to.
import type * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Dns from "effect/net/Dns"
import * as IpNetwork from "effect/net/IpNetwork"
import type * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"

import { AppConfig } from "../Config.js"
import { firstRefused, REFUSED_NAME_MESSAGE, refusedAddressMessage, webhookHost } from "../domain/destinations.js"

/** A URL that may not be set: the message starts with `destination_not_allowed` and names no address. */
export class DestinationNotAllowed extends Data.TaggedError("DestinationNotAllowed")<{ readonly message: string }> {}

/** Why an attempt was not sent: its host did not resolve, or resolved to an address that is not allowed. */
export class DestinationUnreachable extends Data.TaggedError("DestinationUnreachable")<{
  readonly reason: "lookup_failed" | "not_allowed"
}> {}

/** The addresses an attempt connects to: every one resolved for this attempt, and allowed. */
export interface CheckedDestination {
  /** The URL's host as the HTTP client sees it (brackets removed from an IPv6 literal). */
  readonly host: string
  readonly addresses: Arr.NonEmptyReadonlyArray<NetAddress.IpAddress>
}

// How long setting a URL waits for its name to resolve (an attempt has its own deadline).
const CHECK_LOOKUP_TIMEOUT = "5 seconds"

export class WebhookDestinations extends Context.Service<WebhookDestinations>()("Webhooks/Destinations", {
  make: Effect.gen(function*() {
    const dns = yield* Dns.Dns
    const allowed = (yield* AppConfig).webhookAllowedNetworks

    /**
     * The URL's host resolved now (an address in the URL as it is), every address checked; fails
     * when the host does not resolve, or when any of its addresses may not be reached.
     */
    const resolve: (url: string) => Effect.Effect<CheckedDestination, DestinationUnreachable> = Effect.fnUntraced(
      function*(url: string) {
        const host = webhookHost(url)
        if (host === undefined) return yield* new DestinationUnreachable({ reason: "not_allowed" })
        const addresses = host._tag === "Address"
          ? [host.address] as const
          : yield* Effect.mapError(dns.lookup(host.name), () => new DestinationUnreachable({ reason: "lookup_failed" }))
        if (firstRefused(addresses, allowed) !== undefined) return yield* new DestinationUnreachable({ reason: "not_allowed" })
        return { host: host._tag === "Name" ? host.name : new URL(url).hostname.replace(/^\[|\]$/g, ""), addresses }
      }
    )

    /**
     * A URL about to be set: refused when its host is an address that may not be reached, or a
     * name that does not resolve now or resolves to any such address. A name that does not resolve
     * is refused too: the answer is then the same as for a name of the platform's own network, so
     * that it cannot tell which internal names exist (and a typo is caught before any event is lost).
     */
    const check: (url: string) => Effect.Effect<void, DestinationNotAllowed> = Effect.fnUntraced(function*(url: string) {
      const host = webhookHost(url)
      if (host === undefined) return
      if (host._tag === "Address") {
        const kind = firstRefused([host.address], allowed)
        if (kind !== undefined) return yield* new DestinationNotAllowed({ message: refusedAddressMessage(kind) })
        return
      }
      const addresses = yield* Effect.option(Effect.timeout(dns.lookup(host.name), CHECK_LOOKUP_TIMEOUT))
      if (Option.isNone(addresses) || firstRefused(addresses.value, allowed) !== undefined) {
        return yield* new DestinationNotAllowed({ message: REFUSED_NAME_MESSAGE })
      }
    })

    return { resolve, check }
  })
}) {
  /** Needs the resolver (`Dns`) and AppConfig. */
  static readonly layer = Layer.effect(WebhookDestinations, WebhookDestinations.make)
}

/** The networks admitted besides the public internet, as a start-up line says them. */
export const admittedNetworksLine = (networks: ReadonlyArray<IpNetwork.IpNetwork>): string =>
  `webhooks may also be sent to ${networks.map(IpNetwork.format).join(", ")} (WEBHOOK_ALLOWED_NETWORKS), besides the public internet`

/** Says at start-up which networks outside the public internet webhooks may reach, if any. */
export const AdmittedNetworksNotice = Layer.effectDiscard(Effect.gen(function*() {
  const { webhookAllowedNetworks } = yield* AppConfig
  if (webhookAllowedNetworks.length > 0) yield* Effect.logInfo(admittedNetworksLine(webhookAllowedNetworks))
}))

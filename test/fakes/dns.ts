// A fake of the resolver (effect's `Dns` service) for tests: a name answers the addresses a test
// gives it, anything else does not resolve, so that no test asks a real DNS server. A test may point
// a name elsewhere at any moment, or give it answers that change from one lookup to the next (DNS
// rebinding), and count the lookups of a name.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Dns from "effect/net/Dns"
import * as NetAddress from "effect/net/NetAddress"
import * as Result from "effect/Result"

export class FakeDns extends Context.Service<FakeDns, {
  /**
   * From now on `name` resolves to these addresses (none: it does not resolve); with more than one
   * answer, each lookup takes the next, and the last one stays.
   */
  readonly set: (name: string, ...answers: ReadonlyArray<ReadonlyArray<string>>) => void
  /** How many times `name` has been looked up. */
  readonly lookups: (name: string) => number
}>()("Test/FakeDns") {}

/** A fresh fake (each call is its own table): the `Dns` service, and FakeDns to steer it. */
export const fakeDnsLayer = (): Layer.Layer<Dns.Dns | FakeDns> =>
  Layer.unwrap(Effect.sync(() => {
    const table = new Map<string, ReadonlyArray<ReadonlyArray<string>>>()
    const counts = new Map<string, number>()
    const dns = Dns.make({
      lookup: (host) =>
        Effect.sync(() => {
          counts.set(host, (counts.get(host) ?? 0) + 1)
          const answers = table.get(host) ?? []
          if (answers.length > 1) table.set(host, answers.slice(1))
          return (answers[0] ?? []).map((a) => Result.getOrThrow(NetAddress.ipFromString(a)))
        })
    })
    return Layer.merge(
      Layer.succeed(Dns.Dns, dns),
      Layer.succeed(FakeDns, {
        set: (name, ...answers) => void table.set(name, answers),
        lookups: (name) => counts.get(name) ?? 0
      })
    )
  }))

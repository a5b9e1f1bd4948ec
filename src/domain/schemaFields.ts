// The schema building blocks shared by the contract (schema/) and the domain's own tagged errors,
// kept here so that the domain needs nothing from the contract above it.
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

/**
 * A value taken as it is: the typed side of a success, and of the optional keys of an answer.
 * Encoding checks the value once, through the wire schema; decoding has checked it through the
 * same schema. A second pass over the typed side would walk every field again, for nothing.
 */
export const trusted = <A>(): Schema.declare<A> =>
  Schema.declare((_: unknown): _ is A => true, {
    // Already in its wire form: the JSON and string-tree codecs (the document's) leave it as is.
    toCodecJson: () => undefined,
    toCodecStringTree: () => undefined
  })

/**
 * A key of an answer that may be absent: the handler may leave it out or set it to `undefined`,
 * and either way the wire leaves it out (the document shows an optional key, never null).
 */
export const optionalOut = <S extends Schema.Top>(schema: S) =>
  Schema.optionalKey(schema).pipe(
    Schema.decodeTo(Schema.optional(trusted<S["Type"]>()), {
      decode: SchemaGetter.passthrough(),
      encode: SchemaGetter.transformOptional(Option.filter(Predicate.isNotUndefined))
    })
  )

/**
 * An integer in a JSON body. Its integer check stops the checks that follow (ranges), so a
 * fraction reports one issue, as a refinement chain did.
 */
export const Int = Schema.Number.check(Schema.isInt().abort())

/** Bounded string with the length limits of SPEC §8 (counted in characters, not bytes). */
export const Text = (max: number, min = 0) =>
  Schema.String.check(
    Schema.makeFilter(
      (s: string) => {
        const n = [...s].length
        return n >= min && n <= max ? undefined : min > 0 ? `must be ${min} to ${max} characters` : `must be at most ${max} characters`
      },
      { toJsonSchema: () => ({ minLength: min, maxLength: max }) }
    ).abort()
  )

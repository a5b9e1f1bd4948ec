// Row schemas' shared pieces: every repository decodes what PostgreSQL returns at the boundary
// (a column that changes type fails there, loudly, instead of reaching a client), and instants
// become text in the platform time zone through one transform.
import * as Context from "effect/Context"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { PlatformTimeZone } from "../Config.js"
import { formatDate, formatIso, formatTimestamp, parseTimestamp } from "../domain/time.js"

export { PlatformTimeZone }

/**
 * The platform time zone of the fiber decoding (PlatformTimeZone from its context), read without
 * an Effect: an effectful transform would push every row of a page onto the schema parser's slow,
 * effectful path, and this one runs per instant of every row. Outside a fiber: the reference's default.
 */
const currentTimeZone = (): string =>
  Option.match(Fiber.getCurrentFiber(), {
    onNone: () => PlatformTimeZone.defaultValue(),
    onSome: (fiber) => Context.get(fiber.getFiberRef(FiberRef.currentContext), PlatformTimeZone)
  })

const instantAs = (format: (date: Date, timeZone: string) => string, description: string) =>
  Schema.transformOrFail(Schema.ValidDateFromSelf, Schema.String, {
    strict: true,
    decode: (date) => ParseResult.succeed(format(date, currentTimeZone())),
    encode: (text, _, ast) => {
      try {
        return ParseResult.succeed(parseTimestamp(text, currentTimeZone()))
      } catch {
        return ParseResult.fail(new ParseResult.Type(ast, text, "not a timestamp"))
      }
    }
  }).annotations({ description })

/** A `timestamptz` column as `YYYY-MM-DD HH:MM:SS` in the platform time zone. */
export const Timestamp = instantAs(formatTimestamp, "YYYY-MM-DD HH:MM:SS (platform time zone)")

/** A `timestamptz` column as ISO `YYYY-MM-DDTHH:MM:SS` in the platform time zone (SPEC §1's ISO fields). */
export const IsoTimestamp = instantAs(formatIso, "YYYY-MM-DDTHH:MM:SS (platform time zone)")

/** A `timestamptz` column as the date `YYYY-MM-DD` it falls on in the platform time zone. */
export const DateOfInstant = instantAs(formatDate, "YYYY-MM-DD (platform time zone)")

/** A `timestamptz` column kept as an instant (leases, expiries: compared, not shown). */
export const Instant = Schema.ValidDateFromSelf

/** `count(*) OVER ()` of a page query. */
export const TotalCount = Schema.Struct({ total_count: Schema.Int })

/** `SELECT count(*)::int AS n`. */
export const CountRow = Schema.Struct({ n: Schema.Int })

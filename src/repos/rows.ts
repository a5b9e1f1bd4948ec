// Row schemas' shared pieces: every repository decodes what PostgreSQL returns at the boundary
// (a column that changes type fails there, loudly, instead of reaching a client), and instants
// become text in the platform time zone through one transform.
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"

import { PlatformTimeZone } from "../Config.js"
import { formatDate, formatIso, formatTimestamp, parseTimestamp } from "../domain/time.js"

export { PlatformTimeZone }

/**
 * The platform time zone of the fiber decoding (PlatformTimeZone from its context), read without
 * an Effect: this runs per instant of every row, and a plain transform keeps the schema parser
 * from building an effect for each. Outside a fiber: the reference's default.
 */
const currentTimeZone = (): string => {
  const fiber = Fiber.getCurrent()
  return fiber === undefined ? PlatformTimeZone.defaultValue() : fiber.getRef(PlatformTimeZone)
}

const instantAs = (format: (date: Date, timeZone: string) => string, description: string) =>
  Schema.Date.pipe(
    Schema.decodeTo(Schema.String, {
      decode: SchemaGetter.transform((date: Date) => format(date, currentTimeZone())),
      encode: SchemaGetter.transformEffect((text: string, options) =>
        Effect.try({
          try: () => parseTimestamp(text, currentTimeZone()),
          catch: () => new SchemaIssue.InvalidValue({ message: "not a timestamp" }, text, options)
        })
      )
    })
  ).annotate({ description })

/** A `timestamptz` column as `YYYY-MM-DD HH:MM:SS` in the platform time zone. */
export const Timestamp = instantAs(formatTimestamp, "YYYY-MM-DD HH:MM:SS (platform time zone)")

/** A `timestamptz` column as ISO `YYYY-MM-DDTHH:MM:SS` in the platform time zone (SPEC §1's ISO fields). */
export const IsoTimestamp = instantAs(formatIso, "YYYY-MM-DDTHH:MM:SS (platform time zone)")

/** A `timestamptz` column as the date `YYYY-MM-DD` it falls on in the platform time zone. */
export const DateOfInstant = instantAs(formatDate, "YYYY-MM-DD (platform time zone)")

/** A `timestamptz` column kept as an instant (leases, expiries: compared, not shown). */
export const Instant = Schema.Date

/** `count(*) OVER ()` of a page query. */
export const TotalCount = Schema.Struct({ total_count: Schema.Int })

/** `SELECT count(*)::int AS n`. */
export const CountRow = Schema.Struct({ n: Schema.Int })

/**
 * A `bytea` column as a plain copy of its bytes: the driver hands out a view into its read buffer,
 * which would keep that whole buffer alive for as long as the value is held.
 */
export const Bytes = Schema.Uint8Array.pipe(Schema.decodeTo(
  Schema.Uint8Array,
  SchemaTransformation.transform<Uint8Array, Uint8Array>({ decode: (bytes) => new Uint8Array(bytes), encode: (bytes) => bytes })
))

// Small helpers shared by repositories: LIKE patterns and page windows.
import { Effect } from "effect"

/** `%text%` with LIKE's own wildcards escaped, for a case-insensitive substring match. */
export const containsPattern = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** Postgres unique violation. */
export const isUniqueViolation = (error: unknown, constraint?: string): boolean => {
  const cause = (error as { cause?: { code?: string; constraint?: string } } | undefined)?.cause
  return cause?.code === "23505" && (constraint === undefined || cause.constraint === constraint)
}

/**
 * A page of rows selected with `count(*) OVER () AS total_count`, and the total. Only a page past
 * the end (no rows, so no window count) costs a second query: `count` runs only then.
 */
export const pageWithTotal = <Row extends { readonly total_count?: number }, E, R>(
  rows: Effect.Effect<ReadonlyArray<Row>, E, R>,
  count: Effect.Effect<ReadonlyArray<{ readonly n: number }>, E, R>,
  offset: number
): Effect.Effect<{ readonly rows: ReadonlyArray<Row>; readonly total: number }, E, R> =>
  Effect.flatMap(rows, (page) =>
    page[0]?.total_count !== undefined
      ? Effect.succeed({ rows: page, total: page[0].total_count })
      : offset === 0
      ? Effect.succeed({ rows: page, total: 0 })
      : Effect.map(count, (c) => ({ rows: page, total: c[0]?.n ?? 0 })))

// Small helpers shared by repositories: LIKE patterns and page windows.

/** `%text%` with LIKE's own wildcards escaped, for a case-insensitive substring match. */
export const containsPattern = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** Postgres unique violation. */
export const isUniqueViolation = (error: unknown, constraint?: string): boolean => {
  const cause = (error as { cause?: { code?: string; constraint?: string } } | undefined)?.cause
  return cause?.code === "23505" && (constraint === undefined || cause.constraint === constraint)
}

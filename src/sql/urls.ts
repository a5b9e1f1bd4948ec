// Database URLs: one server, several databases (the embedded cluster's, a test run's copies).

/** `url` with its database (the path) replaced by `database`; user, host, port and options stay. */
export const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

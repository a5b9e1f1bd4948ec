// The raw and Fastify floors' POST /companies over a pg pool, node-pg's way: a client checked out,
// BEGIN, the company's INSERT … RETURNING, its `company.created` event (the outbox's statement,
// carrying the company as the answer shows it), COMMIT (ROLLBACK on a failure), the client given
// back. The same statements in the same transaction as the service's (DECISIONS §12).
import type pg from "pg"

import { companyCreatedEvent, companyInsertSql, EVENTS_INSERT_SQL, ROW_TIMES, withTimes } from "./work.js"

/** Inserts a company from the fields sent and records its event; the company as answered. */
export const createCompany = async (pool: pg.Pool, input: Readonly<Record<string, unknown>>): Promise<Record<string, unknown>> => {
  const keys = Object.keys(input)
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const { rows } = await client.query<Record<string, unknown>>(companyInsertSql(keys), keys.map((k) => input[k]))
    const company = withTimes(rows[0]!, ROW_TIMES)
    await client.query(EVENTS_INSERT_SQL, companyCreatedEvent(JSON.stringify(company)))
    await client.query("COMMIT")
    return company
  } catch (e) {
    await client.query("ROLLBACK")
    throw e
  } finally {
    client.release()
  }
}

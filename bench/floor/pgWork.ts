// The raw and Fastify floors' writes over a pg pool, each the service's statements: POST /companies
// in one statement (the company's INSERT and its `company.created` event, carrying the company as
// the answer shows it, as one data-modifying CTE: DECISIONS §12, issue 37); POST /guests as the
// references read at once and one statement.
import type pg from "pg"

import {
  COMPANY_EXISTS_SQL,
  companyInsertSql,
  type FloorGuestChange,
  type FloorGuestInput,
  GUEST_LOCKED_SQL,
  GUEST_VERSIONED_SQL,
  guestCreated,
  guestInsert,
  guestUpdate,
  guestUpdated,
  MATCHMAKER_EXISTS_SQL,
  ROW_TIMES,
  withTimes
} from "./work.js"

/** Inserts a company from the fields sent and records its event; the company as answered. */
export const createCompany = async (pool: pg.Pool, input: Readonly<Record<string, unknown>>): Promise<Record<string, unknown>> => {
  const keys = Object.keys(input)
  const { rows } = await pool.query<Record<string, unknown>>(companyInsertSql(keys), keys.map((k) => input[k]))
  return withTimes(rows[0]!, ROW_TIMES)
}

/**
 * POST /guests: the references read at once (each on a pooled connection), then one statement
 * (guestInsert); undefined for a reference that does not exist (the floors answer 404).
 */
export const createGuest = async (pool: pg.Pool, input: FloorGuestInput): Promise<Record<string, unknown> | undefined> => {
  const [company, matchmaker] = await Promise.all([
    pool.query(COMPANY_EXISTS_SQL, [input.company_id]),
    input.matchmaker_id == null ? undefined : pool.query(MATCHMAKER_EXISTS_SQL, [input.matchmaker_id])
  ])
  if (company.rows.length === 0 || (matchmaker !== undefined && matchmaker.rows.length === 0)) return undefined
  const { text, values } = guestInsert(input)
  const { rows } = await pool.query<Record<string, unknown>>(text, [...values])
  return guestCreated(rows[0]!)
}

/**
 * PUT /guests/{id}: the guest's row and the matchmaker named read at once (each on a pooled
 * connection), then one statement (guestUpdate) against the version read; only when the row
 * changed in between, read again under its lock and written in a transaction, as the service
 * does. Undefined for a guest or a matchmaker that does not exist (the floors answer 404).
 */
export const updateGuest = async (pool: pg.Pool, id: number, change: FloorGuestChange): Promise<Record<string, unknown> | undefined> => {
  const [current, matchmaker] = await Promise.all([
    pool.query<Record<string, unknown>>(GUEST_VERSIONED_SQL, [id]),
    change.matchmaker_id == null ? undefined : pool.query(MATCHMAKER_EXISTS_SQL, [change.matchmaker_id])
  ])
  if (matchmaker !== undefined && matchmaker.rows.length === 0) return undefined
  if (current.rows.length === 0) return undefined
  const { text, values } = guestUpdate(id, current.rows[0]!, change)
  const { rows } = await pool.query<Record<string, unknown>>(text, [...values])
  if (rows.length > 0) return guestUpdated(rows[0]!, change)
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const locked = await client.query<Record<string, unknown>>(GUEST_LOCKED_SQL, [id])
    if (locked.rows.length === 0) {
      await client.query("ROLLBACK")
      return undefined
    }
    const again = guestUpdate(id, locked.rows[0]!, change)
    const written = await client.query<Record<string, unknown>>(again.text, [...again.values])
    await client.query("COMMIT")
    return guestUpdated(written.rows[0]!, change)
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {})
    throw e
  } finally {
    client.release()
  }
}

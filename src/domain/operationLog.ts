// What an operation log entry says for a change (DECISIONS §5): old and new status for
// enable/disable, the changed fields (an object of old values, one of new ones) for update; no
// entry when nothing changes. An update's values stay data until the answer is written, so the
// masker sees them as fields (DECISIONS §13); the wire shows them as the JSON text of the object.

/** An update's changed fields, by field name, with their old or new values (JSON values). */
export type ChangedValues = Readonly<Record<string, unknown>>

/** What a log entry says a value was or became: a status or an id as text, or an update's fields. */
export type LogValue = string | ChangedValues

export interface LogEntry {
  readonly action:
    | "create"
    | "update"
    | "enable"
    | "disable"
    | "delete"
    | "associate"
    | "disassociate"
    | "transfer_in"
    | "transfer_out"
    | "transfer_admin"
  readonly target_type?: string | null
  readonly target_id?: number | null
  readonly from_value?: LogValue | null
  readonly to_value?: LogValue | null
  readonly remark?: string | null
}

/** The text the wire carries for a log value: text as it is, changed fields as their JSON text. */
export const renderLogValue = (value: LogValue): string => typeof value === "string" ? value : JSON.stringify(value)

/**
 * A log value read back from its text: the changed fields when the text is a JSON object (statuses
 * and ids never are), else the text itself. renderLogValue gives the same text back.
 */
export const parseLogValue = (text: string): LogValue => {
  if (!text.startsWith("{")) return text
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed as ChangedValues : text
  } catch {
    return text
  }
}

/** The fields whose value the change alters, with their old and new values. */
export const changedFields = (current: Readonly<Record<string, unknown>>, change: Readonly<Record<string, unknown>>) => {
  const from: Record<string, unknown> = {}
  const to: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(change)) {
    if (v === undefined) continue
    if ((current[k] ?? null) !== (v ?? null)) {
      from[k] = current[k] ?? null
      to[k] = v ?? null
    }
  }
  return Object.keys(to).length === 0 ? undefined : { from, to }
}

/** An update: the columns to set and its log entry; undefined when nothing would change. */
export const updateOf = (current: Readonly<Record<string, unknown>>, change: Readonly<Record<string, unknown>>) => {
  const diff = changedFields(current, change)
  if (diff === undefined) return undefined
  const entry: LogEntry = { action: "update", from_value: diff.from, to_value: diff.to }
  return { set: diff.to, entry }
}

/** A status change and its log entry; undefined when the status is already the one asked for. */
export const statusChangeOf = (from: "active" | "disabled", to: "active" | "disabled"): LogEntry | undefined =>
  from === to ? undefined : { action: to === "active" ? "enable" : "disable", from_value: from, to_value: to }

// What an operation log entry says for a change (DECISIONS §5): old and new status for
// enable/disable, a JSON object of the changed fields for update; no entry when nothing changes.

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
  readonly from_value?: string | null
  readonly to_value?: string | null
  readonly remark?: string | null
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
  const entry: LogEntry = { action: "update", from_value: JSON.stringify(diff.from), to_value: JSON.stringify(diff.to) }
  return { set: diff.to, entry }
}

/** A status change and its log entry; undefined when the status is already the one asked for. */
export const statusChangeOf = (from: "active" | "disabled", to: "active" | "disabled"): LogEntry | undefined =>
  from === to ? undefined : { action: to === "active" ? "enable" : "disable", from_value: from, to_value: to }

// The operator's view of a running installation: `status` (clients, queues with their depth, oldest
// waiting work, failures in the last hour and held card tasks, the webhook backlog per client,
// daemons) and `daemons list` (each daemon's heartbeat, jobs and last runs), as one JSON value.
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"

import { PlatformTimeZone } from "../Config.js"
import type { JobSnapshot } from "../domain/jobs.js"
import { formatIso } from "../domain/time.js"
import { type DaemonRow, DaemonsRepo } from "../repos/DaemonsRepo.js"
import { type HeldCardTask, MonitoringRepo } from "../repos/MonitoringRepo.js"
import { answering } from "./cli.js"

/** Held card tasks shown per status (the oldest). */
const HELD_SHOWN = 50

type DaemonState = "alive" | "stopped" | "dead"

const daemonState = (d: DaemonRow): DaemonState => d.alive ? "alive" : d.stopped_at !== null ? "stopped" : "dead"

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits

const jobView = (name: string, j: JobSnapshot, timeZone: string) => {
  const at = (ms: number | null) => (ms === null ? null : formatIso(new Date(ms), timeZone))
  return {
    job: name,
    kind: j.kind,
    ...(j.every_seconds !== null ? { every_seconds: j.every_seconds } : {}),
    ...(j.concurrency !== null ? { workers: j.concurrency } : {}),
    runs: j.runs,
    failures: j.failures,
    failures_last_hour: j.failures_last_hour,
    running: j.running,
    last_run: j.last_started_at === null ? null : {
      started_at: at(j.last_started_at),
      finished_at: at(j.last_finished_at),
      duration_ms: j.last_duration_ms,
      outcome: j.last_outcome,
      ...(j.last_error !== null ? { error: j.last_error } : {})
    }
  }
}

const daemonView = (d: DaemonRow, timeZone: string) => ({
  instance_id: d.instance_id,
  host: d.host,
  pid: d.pid,
  state: daemonState(d),
  started_at: d.started_at,
  last_beat_at: d.last_beat_at,
  seconds_since_beat: round(d.seconds_since_beat),
  beat_every_seconds: d.interval_seconds,
  ...(d.stopped_at !== null ? { stopped_at: d.stopped_at } : {}),
  jobs: Object.entries(d.jobs).sort(([a], [b]) => a.localeCompare(b)).map(([name, j]) => jobView(name, j, timeZone))
})

/** What a held card task is waiting for, in words an operator can act on. */
const heldState = (t: HeldCardTask): string =>
  t.lease_expired
    ? "stuck: the lease ran out; the next daemon to poll the queue takes it over"
    : t.daemon_alive
    ? "running"
    : `stuck: ${t.daemon === null ? "its daemon is unknown" : "its daemon stopped beating"}; another daemon takes it when the lease ends`

/** `daemons list`: every daemon that beat in the last week, newest first. */
export const listDaemons = Effect.gen(function*() {
  const repo = yield* DaemonsRepo
  const timeZone = yield* PlatformTimeZone
  const rows = yield* repo.list(200)
  return rows.map((d) => daemonView(d, timeZone))
})

/** `status`: one summary of the installation. */
export const status = Effect.gen(function*() {
  const monitoring = yield* MonitoringRepo
  const daemons = yield* DaemonsRepo
  const timeZone = yield* PlatformTimeZone
  const [clients, queues, held, backlog, rows] = yield* Effect.all([
    monitoring.clients,
    monitoring.queueStats,
    monitoring.heldCardTasks(HELD_SHOWN),
    monitoring.webhookBacklog,
    daemons.list(200)
  ], { concurrency: "unbounded" })
  const views = rows.map((d) => daemonView(d, timeZone))
  const heldTasks = held.map((t) => ({
    task_id: t.task_id,
    attempts: t.attempts,
    waiting_seconds: round(t.waiting_seconds),
    locked_by: t.locked_by,
    daemon: t.daemon,
    daemon_alive: t.daemon_alive,
    lease_until: t.lease_until,
    lease_expired: t.lease_expired,
    state: heldState(t)
  }))
  return {
    generated_at: formatIso(new Date(), timeZone),
    clients,
    queues: queues.map((q) => ({
      ...q,
      oldest_age_seconds: round(q.oldest_age_seconds),
      ...(q.queue === "card-tasks"
        ? { stuck: heldTasks.filter((t) => t.state !== "running").length, held_tasks: heldTasks }
        : {})
    })),
    webhook_backlog: backlog.map((b) => ({ ...b, oldest_due_age_seconds: round(b.oldest_due_age_seconds) })),
    daemons: {
      alive: views.filter((d) => d.state === "alive").length,
      dead: views.filter((d) => d.state === "dead").length,
      stopped: views.filter((d) => d.state === "stopped").length,
      list: views.filter((d) => d.state !== "stopped")
    }
  }
}).pipe(Effect.provide([MonitoringRepo.layer, DaemonsRepo.layer]))

/** `daemons list` with its repository. */
export const daemonsList = listDaemons.pipe(Effect.provide(DaemonsRepo.layer))

export const statusCommand = answering("status", {}, () => status).pipe(
  Command.withDescription("One summary: clients, queues, held card tasks, the webhook backlog, daemons")
)

export const daemonsCommand = Command.make("daemons").pipe(
  Command.withDescription("Job daemons"),
  Command.withSubcommands([
    answering("list", {}, () => daemonsList).pipe(Command.withDescription("Every daemon that beat in the last week, newest first"))
  ])
)

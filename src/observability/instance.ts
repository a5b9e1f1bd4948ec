// This process's identity in heartbeats and lock holders: `host:pid:random`, unique even when a
// restarted container reuses the host name and the pid.
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"

export const DAEMON_INSTANCE = {
  id: `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`,
  host: hostname(),
  pid: process.pid,
  startedAtMs: Date.now()
} as const

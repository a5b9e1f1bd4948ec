// Which PostgreSQL server of the test run this test file uses. The integration project runs several
// files at once (vitest.config.ts), each in a worker of its own, and test/globalSetup.ts starts one
// server per worker: a file's databases live on its worker's server, so that no other file's open
// transactions hold back its events feed (the feed's horizon is the cluster's oldest snapshot) and
// no other file's locks or sessions show in its pg_locks or pg_stat_activity.
// Nothing here imports the service's code (test/wire.test.ts uses it).
import { inject } from "vitest"

/**
 * The URL of a database on this worker's server from which databases may be created and dropped.
 * VITEST_POOL_ID numbers the workers running at once from 1; files running at the same time never
 * share one.
 */
export const databaseAdminUrl = (): string => {
  const urls = inject("databaseAdminUrls")
  const worker = Number(process.env["VITEST_POOL_ID"] ?? "1")
  return urls[(Number.isInteger(worker) && worker >= 1 ? worker - 1 : 0) % urls.length]!
}

// Loaded first (`node --import`) by the short-lived commands (`npm run admin`): V8's code cache for
// the modules they load, kept in the temp folder, so that a command that runs in a second does not
// spend a sixth of it compiling the same JavaScript again. The flag must come before the entry
// point's imports, which an import inside it would not.
import { enableCompileCache } from "node:module"

enableCompileCache()

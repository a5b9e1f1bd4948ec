// Loaded into `npm start`'s children (node --import): a child stops (as on SIGTERM, gracefully) when
// the start script that runs it is gone, even killed outright, which it learns from the IPC channel
// the start script opened to it closing. Node has no parent-death signal; this is its stand-in.
if (process.channel !== undefined) {
  // The channel alone must not keep the process alive.
  process.channel.unref()
  process.once("disconnect", () => process.kill(process.pid, "SIGTERM"))
}
export {}

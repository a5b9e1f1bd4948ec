// A module hook (`node --import` this file) that prints, on stdout at exit, every module URL the
// process resolved, one per line: what a process really loads, barrels included.
import { register } from "node:module"
import process from "node:process"
import { MessageChannel } from "node:worker_threads"

const { port1, port2 } = new MessageChannel()
const urls = new Set()
port1.on("message", (url) => urls.add(url))
port1.unref()
register(
  "data:text/javascript," + encodeURIComponent(`
let port
export function initialize(data) { port = data.port }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  port.postMessage(resolved.url)
  return resolved
}`),
  { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] }
)
process.on("exit", () => process.stdout.write([...urls].join("\n") + "\n"))

// The Node flags the service's processes run with: `npm start` (its two children), `npm run api`,
// `npm run jobs` (package.json repeats them; a test keeps the two in step) and the benchmark.

/**
 * A 1 GiB V8 heap limit. Besides bounding the heap, it makes V8 grow the heap in smaller steps: with
 * the default limit, taken from this machine's memory (24 GiB here), V8 lets the old generation fill
 * with garbage up to about three times what survives a collection, and the API under load sat near
 * 290 MB resident; with this limit, near 195 MB, at the same throughput (docs/benchmarks.md).
 */
export const NODE_FLAGS: ReadonlyArray<string> = ["--max-old-space-size=1024"]

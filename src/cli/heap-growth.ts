import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the old generation grow past what survived the last full
 * collection, in percent. V8's own factor goes up to 4×, and an export makes
 * short-lived garbage at a steady pace (pages, rows, the 5,000 rows waiting for
 * their commit): the heap settled at ~150 MB where far less was live. With
 * 40%, an 800,000-row export into DuckDB peaked at ~360 MB RSS instead of
 * ~460 MB, no slower (docs/performance.md, "A whole export").
 */
export const EXPORT_HEAP_GROWING_PERCENT = 40;

/**
 * Bounds the V8 heap's growth for the rest of this process. A heap cap
 * (`--max-old-space-size`) cannot be changed once the process runs, and
 * `--heap-growing-percent` is refused in NODE_OPTIONS, but V8 reads this one at
 * every full collection, so setting it here takes effect (measured: see above).
 */
export function limitHeapGrowth(percent: number = EXPORT_HEAP_GROWING_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}

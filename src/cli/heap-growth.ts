import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the old generation grow past what survived the last full
 * collection, in percent (V8's own factor goes up to 4×). Inline imports and
 * exports make short-lived garbage at a steady pace — spill rows, request
 * bodies and fetch's machinery; pages, rows, the rows waiting for their
 * commit — some of which outlives a young collection because requests are in
 * flight. With V8's default growth the old generation filled with it to ~3×
 * what was live before a full collection. Measured (docs/engineering/performance-log.md):
 * - import, 1M rows: 222–244 MB peak RSS by default, 177–196 MB at 60%
 *   (30% and 100% measured too), no speed cost this machine's noise showed;
 *   later, the import mapping on the parse thread, 211 MB at 10%, 219 MB at
 *   25%, 221 MB at 60% (one run each), and 20% kept;
 * - export of 800k participants into DuckDB: 453–478 MB by default,
 *   375–378 MB at 40% (5–40% all within 359–378 MB), no slower.
 * Costs more frequent full collections, incremental and cheap with a live
 * heap this small.
 */
export const HEAP_GROWING_PERCENT = { import: 20, export: 40 } as const;

/**
 * Bounds the V8 heap's growth for the rest of this process. A heap cap
 * (`--max-old-space-size`) or the young generation's size cannot be changed
 * once the process runs, and `--heap-growing-percent` is refused in
 * NODE_OPTIONS, but V8 reads this one at every full collection, so setting it
 * here takes effect.
 */
export function limitHeapGrowth(command: keyof typeof HEAP_GROWING_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT[command]}`);
}

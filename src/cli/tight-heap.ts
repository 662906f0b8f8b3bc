import v8 from "node:v8";

/**
 * How much V8 lets the old generation grow past what survived the last full
 * GC, in percent: the factor is 1 + this / 100 (V8's own varies between ~1.1
 * and 4 with its speed estimates).
 */
export const IMPORT_HEAP_GROWING_PERCENT = 60;

/**
 * Keeps the heap close to what is live for the rest of the process: an inline
 * import's send phase makes short-lived garbage at a steady rate (spill rows,
 * request bodies, fetch's machinery), some of which outlives a young GC
 * because requests are in flight; with V8's default growth the old generation
 * filled with it up to ~3× the ~23 MB live before a full GC, and the CLI
 * peaked at 222–244 MB on a 1M-row file; with 60% 177–196 MB, at no speed
 * cost this machine's noise let us see (30% and 100% measured too):
 * docs/performance.md, "Imports end to end". The flag is read at every full
 * GC, so setting it after start takes effect (unlike the young generation's
 * size, fixed when the heap is set up). Costs more frequent full GCs, which
 * are incremental and cheap with a live heap this small.
 */
export function keepHeapTight(percent = IMPORT_HEAP_GROWING_PERCENT): void {
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}

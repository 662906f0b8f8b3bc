import { Writable } from "node:stream";
import type { ImportProgress } from "../../src/imports/index.ts";

/** A stream that keeps what was written; `tty` makes it look like a terminal of `columns`. */
export function capture(tty: boolean, columns = 80) {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  }) as Writable & { isTTY?: boolean; columns?: number };
  if (tty) {
    stream.isTTY = true;
    stream.columns = columns;
  }
  return { stream, text: () => chunks.join("") };
}

/** An import's progress in `phase` of a 2 MB file, nothing counted yet unless `over` says. */
export function importAt(phase: ImportProgress["phase"], over: Partial<ImportProgress> = {}): ImportProgress {
  return {
    kind: "import",
    phase,
    bytesRead: 0,
    bytesTotal: 2_000_000,
    rowsRead: 0,
    imported: 0,
    rejected: 0,
    duplicates: 0,
    batches: 0,
    batchesResumed: 0,
    requests: 0,
    ...over,
  };
}

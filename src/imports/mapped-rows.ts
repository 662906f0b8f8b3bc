import type { ImportJobDefinition } from "../config/import-job.ts";
import type { CsvFormat } from "./csv-format.ts";
import { type PlannedHeader, type RefusedRow, unpackChunk, type ValidRow } from "./mapped-transport.ts";
import { mappedChunks } from "./read-records.ts";
import { planHeader } from "./rules/index.ts";

export type { PlannedHeader, RefusedRow, ValidRow } from "./mapped-transport.ts";

/** A chunk of the file's rows, mapped, in file order. */
export interface MappedRows {
  /** Bytes of the file read so far, for progress. */
  bytesRead: number;
  /** What the column plan made of the header, in the chunk that met it. */
  planned: PlannedHeader | undefined;
  blankRows: number;
  rows: Iterable<ValidRow | RefusedRow>;
}

export interface MappedRowsOptions {
  /** Parse and map on a worker thread; by default only files of a few megabytes and more are. */
  worker?: boolean;
  /** Stamp the valid rows for the change-only state as they are mapped. */
  stamps: boolean;
  signal?: AbortSignal;
}

/**
 * The source of mapped rows: every row of the file mapped to a person or
 * refused, as plain values, whichever thread parsed and mapped it (the parse
 * thread and its transport stay behind this function: read-records.ts,
 * parse-worker.ts, mapped-transport.ts). A header the column plan refuses
 * fails here with the plan's own error.
 */
export async function* readMappedRows(
  format: CsvFormat,
  def: ImportJobDefinition,
  options: MappedRowsOptions,
): AsyncGenerator<MappedRows> {
  for await (const m of mappedChunks(format, def, options)) {
    if (m.refusedHeader !== undefined) {
      // The parse thread's error lost its class on the way: planned again here, it is thrown whole.
      planHeader(def, m.refusedHeader);
      throw new Error("the column plan refused the header on the parse thread, and accepted it here");
    }
    yield { bytesRead: m.bytesRead, planned: m.planned, blankRows: m.blankRows, rows: unpackChunk(m) };
  }
}

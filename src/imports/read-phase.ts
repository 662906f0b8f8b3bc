import type { ImportJobDefinition } from "../config/import-job.ts";
import type { CsvFormat } from "./csv-format.ts";
import { ImportFileError } from "./import-error.ts";
import { type PlannedHeader, readMappedRows, type ValidRow } from "./mapped-rows.ts";
import type { MaybePromise } from "./maybe-promise.ts";
import type { RejectsWriter } from "./rejects-writer.ts";
import { codesOf, type RejectTally, type RowProblem, reasonOf, tallyRejects } from "./row-problem.ts";
import { RunWarnings, type RunWarningsOptions } from "./run-warnings.ts";

export interface ReadCounts extends RejectTally {
  rowsRead: number;
  blankRows: number;
  /** Rows whose "not opted out" was not sent (research consent moves one way). */
  optInsHeldBack: number;
  /** Valid rows whose person is sent opted out (isOptedOut true). */
  optedOut: number;
  /** Rows with fewer cells than the header, read as if the missing trailing cells were empty. */
  shortRows: number;
}

export interface ReadPhaseInput {
  file: string;
  format: CsvFormat;
  definition: ImportJobDefinition;
  /** Where valid people go, in file order (merge-phase.ts's StreamMerge). */
  people: { put(row: ValidRow): MaybePromise };
  /** Where the phase notes dropped values and phones without a country, row by row (run-warnings.ts). */
  warnings: RunWarningsOptions;
  /** Where refused rows go, with their cells: the run opens and closes it, this phase only writes. */
  rejects: RejectsWriter;
  /** Hears each refused row for the run's sync log (src/synclog/person-log.ts). */
  personLog?: { refused(row: number, problems: readonly RowProblem[]): void };
  worker?: boolean;
  /** Stamp the valid rows for the change-only state as they are mapped. */
  stamps?: boolean;
  signal?: AbortSignal;
  /** After every chunk of rows: the bytes read so far and the counts as they stand. */
  onChunk?: (bytesRead: number, counts: ReadCounts) => void;
  /**
   * Called once, right after the `rows`-th row (blank rows aside): at a row,
   * not at the end of a chunk, so that what follows (the run's batch sizes,
   * and which rows merge into a batch not yet cut) does not depend on how the
   * file was cut into chunks, which differs between threads and versions.
   */
  gate?: { rows: number; open: (counts: ReadCounts, bytesRead: number) => void };
}

export interface ReadPhaseOutput {
  counts: ReadCounts;
  /** What the rows left to warn about, written out and closed; the finish makes the warnings file of it. */
  warnings: RunWarnings;
  unmappedColumns: string[];
  ignoredColumns: string[];
}

function emptyCounts(): ReadCounts {
  return {
    rowsRead: 0,
    blankRows: 0,
    rejected: 0,
    rejectedByReason: {},
    rejectedByCode: {},
    optInsHeldBack: 0,
    optedOut: 0,
    shortRows: 0,
  };
}

/**
 * Phase 1, read and map: every row of the file mapped and checked against
 * the contract (mapped-rows.ts, on the parse thread for large files); valid
 * people go on to the merge, refused rows to the rejects file. Throws
 * ImportFileError when the file has no header row.
 */
export async function readAndValidate(input: ReadPhaseInput): Promise<ReadPhaseOutput> {
  const counts = emptyCounts();
  let planned: PlannedHeader | undefined;
  const rows = readMappedRows(input.format, input.definition, {
    ...(input.worker === undefined ? {} : { worker: input.worker }),
    stamps: input.stamps ?? false,
    ...(input.signal ? { signal: input.signal } : {}),
  });
  const warnings = new RunWarnings(input.warnings);
  try {
    for await (const chunk of rows) {
      if (chunk.planned !== undefined) {
        planned = chunk.planned;
        input.rejects.useHeaders(planned.headers);
      }
      counts.blankRows += chunk.blankRows;
      for (const r of chunk.rows) {
        counts.rowsRead++;
        if (r.short) counts.shortRows++;
        let wait: MaybePromise;
        if (r.valid) {
          if (r.dropped !== undefined) warnings.dropped(r.row, r.dropped);
          if (r.optInHeldBack) counts.optInsHeldBack++;
          if (r.optedOut) counts.optedOut++;
          wait = input.people.put(r);
        } else {
          warnings.refused(r.issues);
          const reason = reasonOf(r.issues);
          const codes = codesOf(r.issues);
          counts.rejected++;
          tallyRejects(counts, reason, codes);
          input.personLog?.refused(r.row, r.issues);
          wait = input.rejects.write(r.row, reason, codes, r.cells);
        }
        if (wait) await wait;
        if (counts.rowsRead === input.gate?.rows) input.gate.open(counts, chunk.bytesRead);
      }
      input.onChunk?.(chunk.bytesRead, counts);
    }
  } catch (err) {
    warnings.abandon();
    throw err;
  }
  warnings.end();
  if (planned === undefined) {
    throw new ImportFileError("file_empty", `${input.file} has no header row: there is nothing to import`);
  }
  return { counts, warnings, unmappedColumns: planned.unmapped, ignoredColumns: planned.ignored };
}

import type { ImportJobDefinition } from "../config/import-job.ts";
import {
  headersOf,
  type MappedChunk,
  ROW_DROPPED_VALUES,
  ROW_OPT_IN_HELD_BACK,
  ROW_OPTED_OUT,
  ROW_REJECTED,
  ROW_SHORT,
} from "./chunk-mapper.ts";
import { planColumns } from "./column-plan.ts";
import { ImportFileError } from "./import-error.ts";
import type { MaybePromise } from "./maybe-promise.ts";
import type { CsvSource } from "./read-records.ts";
import type { RejectsWriter } from "./rejects-writer.ts";
import { codesOf, type DroppedValue, reasonOf, tallyRejects } from "./row-problem.ts";
import type { RunWarnings } from "./run-warnings.ts";

export interface ReadCounts {
  rowsRead: number;
  blankRows: number;
  /** Rows whose "not opted out" was not sent (research consent moves one way). */
  optInsHeldBack: number;
  /** Valid rows whose person is sent opted out (isOptedOut true). */
  optedOut: number;
  /** Rows with fewer cells than the header, read as if the missing trailing cells were empty. */
  shortRows: number;
  rejected: number;
  rejectedByReason: Record<string, number>;
  rejectedByCode: Record<string, number>;
}

export interface ReadPhaseInput {
  file: string;
  csv: CsvSource;
  definition: ImportJobDefinition;
  /** Where valid people go, in file order (merge-phase.ts's StreamMerge, or a spill). */
  spill: {
    readonly count: number;
    /** `prev`: the previous valid row whose key shares this row's hash (the mapper's person index), or -1. */
    append(
      row: number,
      population: string | null,
      prev: number,
      person: string,
      key?: string,
      stamp?: Uint32Array,
    ): MaybePromise;
  };
  /** Notes dropped values and phones without a country, row by row. */
  warnings: RunWarnings;
  /** Where refused rows go, with their cells: the run opens and closes it, this phase only writes. */
  rejects: RejectsWriter;
  worker?: boolean;
  /** Stamp the valid rows for the change-only state as they are mapped (the spill takes the stamps). */
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
  unmappedColumns: string[];
  ignoredColumns: string[];
}

/**
 * Phase 1, read and validate: every row of the file is mapped and checked
 * against the contract (chunk-mapper.ts, on the parse thread for large
 * files); valid people go to the spill, refused rows to the rejects file,
 * each valid row carrying the previous row of its (population, identifier)
 * (by its hash) so the merge phase finds the person's earlier version.
 * Throws ImportFileError when the file has no header row.
 */
export async function readAndValidate(input: ReadPhaseInput): Promise<ReadPhaseOutput> {
  const def = input.definition;
  const { spill, warnings, signal, rejects } = input;
  const counts: ReadCounts = {
    rowsRead: 0,
    blankRows: 0,
    rejected: 0,
    rejectedByReason: {},
    rejectedByCode: {},
    optInsHeldBack: 0,
    optedOut: 0,
    shortRows: 0,
  };
  let planned = false;
  let columns = { unmapped: [] as string[], ignored: [] as string[] };

  const mapOptions = {
    ...(input.worker === undefined ? {} : { worker: input.worker }),
    stamps: input.stamps ?? false,
  };
  for await (const m of input.csv.mapped(def, signal, mapOptions)) {
    if (m.header !== undefined) {
      // Planned here too, though the rows were mapped elsewhere: a file this plan refuses fails with its own error.
      const plan = planColumns(headersOf(def, m.header), def);
      columns = { unmapped: plan.unmapped, ignored: plan.ignored };
      rejects.useHeaders(plan.headers);
      planned = true;
    }
    if (m.planFailed !== undefined)
      throw new Error(`the column plan failed on the parse thread: ${m.planFailed}`);
    counts.blankRows += m.blankRows;
    // The mapper numbers valid rows as the spill does: one spilled version a valid row, in order.
    if (m.firstSeq !== spill.count) {
      throw new Error(
        `the mapper's row ${m.firstSeq} is the spill's ${spill.count}: the read phase lost count`,
      );
    }
    let valid = 0;
    let refused = 0;
    let dropped = 0;
    let personFrom = 0;
    let keyFrom = 0;
    for (let i = 0; i < m.rows.length; i++) {
      counts.rowsRead++;
      const row = m.rows[i] as number;
      const flags = m.flags[i] as number;
      let wait: MaybePromise;
      if (flags & ROW_SHORT) counts.shortRows++;
      if (flags & ROW_REJECTED) {
        const { issues, cells } = m.rejects[refused++] as MappedChunk["rejects"][number];
        warnings.refused(issues);
        const reason = reasonOf(issues);
        const codes = codesOf(issues);
        counts.rejected++;
        tallyRejects(counts, reason, codes);
        wait = rejects.write(row, reason, codes, cells);
      } else {
        if (flags & ROW_DROPPED_VALUES) warnings.dropped(row, m.dropped[dropped++] as DroppedValue[]);
        if (flags & ROW_OPT_IN_HELD_BACK) counts.optInsHeldBack++;
        if (flags & ROW_OPTED_OUT) counts.optedOut++;
        const v = valid++;
        const personTo = m.peopleEnds[v] as number;
        const keyTo = m.keyEnds[v] as number;
        const pop = m.populations[v] as number;
        const person = m.people.slice(personFrom, personTo);
        const key = m.keys.slice(keyFrom, keyTo);
        personFrom = personTo;
        keyFrom = keyTo;
        const population = pop < 0 ? null : (m.populationNames[pop] as string);
        const stamp = m.stamps.length === 0 ? undefined : m.stamps.subarray(v * 4, v * 4 + 4);
        wait = spill.append(row, population, m.prevs[v] as number, person, key, stamp);
      }
      if (wait) await wait;
      if (counts.rowsRead === input.gate?.rows) input.gate.open(counts, m.bytesRead);
    }
    input.onChunk?.(m.bytesRead, counts);
  }
  if (!planned) {
    throw new ImportFileError("file_empty", `${input.file} has no header row: there is nothing to import`);
  }
  return { counts, unmappedColumns: columns.unmapped, ignoredColumns: columns.ignored };
}

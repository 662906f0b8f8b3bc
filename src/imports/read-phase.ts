import type { ImportJobDefinition } from "../config/import-job.ts";
import { planColumns } from "./column-plan.ts";
import { dedupeKey, KeyIndex, SeqLinks } from "./dedupe.ts";
import { ImportFileError } from "./import-error.ts";
import { mapRow } from "./map-row.ts";
import type { MaybePromise } from "./maybe-promise.ts";
import type { CsvSource } from "./read-records.ts";
import type { RejectsWriter } from "./rejects-writer.ts";
import { codesOf, reasonOf, tallyRejects } from "./row-issue.ts";
import { planRow, type RowPlan } from "./row-plan.ts";
import type { RunWarnings } from "./run-warnings.ts";

export interface ReadCounts {
  rowsRead: number;
  blankRows: number;
  /** Rows whose "not opted out" was not sent (research consent moves one way). */
  optInsHeldBack: number;
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
    append(row: number, population: string | null, person: string, key?: string): MaybePromise;
  };
  /** Each valid row's previous row of the same key, filled as rows are read; a new one when not given. */
  links?: SeqLinks;
  /** Notes dropped values and phones without a country, row by row. */
  warnings: RunWarnings;
  /** Where refused rows go, with their cells: the run opens and closes it, this phase only writes. */
  rejects: RejectsWriter;
  worker?: boolean;
  signal?: AbortSignal;
  /** After every chunk of rows: the bytes read so far and the counts as they stand. */
  onChunk?: (bytesRead: number, counts: ReadCounts) => void;
}

export interface ReadPhaseOutput {
  counts: ReadCounts;
  unmappedColumns: string[];
  ignoredColumns: string[];
  /** Each spilled row's previous row of the same person, and whether a later one supersedes it. */
  links: SeqLinks;
}

/**
 * Bytes read before the key index is sized for the whole file: enough rows
 * for their average length to predict the rest (the reader's read-ahead, a
 * few tens of kilobytes, then errs by a few percent), early enough that
 * resizing moves only a few thousand keys.
 */
const ESTIMATE_AFTER_BYTES = 2 << 20;

function isBlank(cells: readonly string[]): boolean {
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i] as string;
    // Most cells start with a visible character: no need to trim them.
    if (c.length > 0 && (c.charCodeAt(0) > 32 || c.trim() !== "")) return false;
  }
  return true;
}

/**
 * Phase 1, read and validate: every row of the file is mapped and checked
 * against the contract; valid people go to the spill, refused rows to the
 * rejects file, and each person's rows are linked by (population,
 * identifier) so the merge phase knows which row is a person's last.
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
  };
  const index = new KeyIndex();
  const links = input.links ?? new SeqLinks();
  let skipped = 0;
  let rowPlan: RowPlan | undefined;
  let columns = { unmapped: [] as string[], ignored: [] as string[] };
  let reserved = false;

  const take = (plan: RowPlan, cells: string[], row: number): MaybePromise => {
    counts.rowsRead++;
    const mapped = mapRow(plan, cells, row);
    warnings.take(row, mapped);
    if (!mapped.ok) {
      const reason = reasonOf(mapped.issues);
      const codes = codesOf(mapped.issues);
      counts.rejected++;
      tallyRejects(counts, reason, codes);
      return rejects.write(row, reason, codes, cells);
    }
    if (mapped.optInHeldBack) counts.optInsHeldBack++;
    // (population, identifier): the service matches within the population, so the same email in two is two people.
    links.push(index.put(dedupeKey(mapped.population, mapped.key), spill.count));
    return spill.append(row, mapped.population, JSON.stringify(mapped.person), mapped.key);
  };

  for await (const chunk of input.csv.records(
    signal,
    input.worker === undefined ? {} : { worker: input.worker },
  )) {
    for (let i = 0; i < chunk.length; i++) {
      const cells = chunk.cells(i);
      const row = chunk.firstRow + i;
      if (rowPlan === undefined) {
        if (skipped < def.source.skipRows) {
          skipped++;
          continue;
        }
        if (isBlank(cells)) {
          counts.blankRows++;
          continue;
        }
        const headers = def.source.header ? cells : cells.map((_c, k) => `column${k + 1}`);
        const plan = planColumns(headers, def);
        columns = { unmapped: plan.unmapped, ignored: plan.ignored };
        rowPlan = planRow(plan, def);
        rejects.useHeaders(plan.headers);
        if (def.source.header) continue;
      }
      if (isBlank(cells)) {
        counts.blankRows++;
        continue;
      }
      const wait = take(rowPlan, cells, row);
      if (wait) await wait;
    }
    if (!reserved && chunk.bytesRead >= Math.min(ESTIMATE_AFTER_BYTES, input.csv.size)) {
      // Rows so far (header and blanks included) over bytes so far, scaled to the file's size.
      const rowsSoFar = chunk.firstRow + chunk.length - 1;
      index.reserve(Math.ceil((rowsSoFar * input.csv.size) / chunk.bytesRead));
      reserved = true;
    }
    input.onChunk?.(chunk.bytesRead, counts);
  }
  if (rowPlan === undefined) {
    throw new ImportFileError("file_empty", `${input.file} has no header row: there is nothing to import`);
  }
  return { counts, unmappedColumns: columns.unmapped, ignoredColumns: columns.ignored, links };
}

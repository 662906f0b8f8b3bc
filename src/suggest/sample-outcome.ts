import { ImportJobDefinition, type ImportJobDefinitionInput } from "../config/import-job.ts";
import { createRowMapper, planColumns } from "../imports/index.ts";
import { refusesFile } from "../imports/refusal-rule.ts";
import { reasonOf } from "../imports/row-problem.ts";

/** What importing the sampled rows under a suggested definition would do. */
export interface SampleOutcome {
  /** Data rows mapped (the sample, not necessarily the whole file). */
  rows: number;
  imported: number;
  rejected: number;
  /** Of the imported, those whose isOptedOut is true. */
  optedOut: number;
  /** Of the imported, those whose "not opted out" is held back (the job has no `optIn: allow`): sent without it. */
  heldBack: number;
  /** Values left out of imported people (`invalidOptionalValues: drop`). */
  droppedValues: number;
  /** The most frequent reasons of rejected rows, as the rejects file words them (headers, never cells). */
  topReasons: { reason: string; rows: number }[];
  /** A run would refuse the file: more than half of its first rows rejected. */
  wouldRefuse: boolean;
  /** The column plan failed: the import would stop before the first row, and why. */
  stopped: string | null;
}

/**
 * Maps the sampled rows with the import's own column plan and row mapper
 * (planColumns, createRowMapper: what every run and dry run does with a row)
 * under a suggested definition, and counts what would happen. Nothing is
 * sent, nothing written; duplicates are not merged (each row counts).
 */
export function sampleOutcome(
  records: readonly (readonly string[])[],
  hasHeader: boolean,
  input: ImportJobDefinitionInput,
): SampleOutcome {
  const def = ImportJobDefinition.parse(input);
  const width = hasHeader ? (records[0]?.length ?? 0) : Math.max(0, ...records.map((r) => r.length));
  const headers = hasHeader
    ? [...(records[0] ?? [])]
    : Array.from({ length: width }, (_v, i) => `column${i + 1}`);
  const rows = hasHeader ? records.slice(1) : records;
  const out: SampleOutcome = {
    rows: rows.length,
    imported: 0,
    rejected: 0,
    optedOut: 0,
    heldBack: 0,
    droppedValues: 0,
    topReasons: [],
    wouldRefuse: false,
    stopped: null,
  };
  let map: ReturnType<typeof createRowMapper>;
  try {
    map = createRowMapper(planColumns(headers, def), def);
  } catch (err) {
    out.stopped = err instanceof Error ? err.message : String(err);
    return out;
  }
  const reasons = new Map<string, number>();
  let missingIdentifier = 0;
  rows.forEach((cells, i) => {
    const mapped = map(cells, i + (hasHeader ? 2 : 1));
    if (!mapped.ok) {
      out.rejected++;
      if (mapped.issues.some((issue) => issue.code === "missing_identifier")) missingIdentifier++;
      const reason = reasonOf(mapped.issues);
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      return;
    }
    out.imported++;
    if (mapped.optInHeldBack) out.heldBack++;
    if (mapped.person.isOptedOut === true) out.optedOut++;
    out.droppedValues += mapped.dropped?.length ?? 0;
  });
  out.topReasons = [...reasons]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 3)
    .map(([reason, n]) => ({ reason, rows: n }));
  out.wouldRefuse = refusesFile({ rowsRead: out.rows, rejected: out.rejected, missingIdentifier });
  return out;
}

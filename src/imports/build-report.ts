import type { LedgerRun } from "./ledger.ts";
import type { ReadCounts } from "./read-phase.ts";
import type { ImportReport, OptOutReport } from "./report.ts";
import type { WarningCounts } from "./run-warnings.ts";
import type { SendCounts } from "./send-counts.ts";

/** What names a run in its report, known before the first row is read. */
export interface ReportIdentity {
  job: string;
  file: string;
  dryRun: boolean;
  unmappedAs: ImportReport["unmappedAs"];
  encoding: string;
  /** The file's delimiter; a tab is reported as "tab". */
  delimiter: string;
  fileHash: string;
  definitionHash: string;
}

/** The read phase's counts and what it made of the header. */
export interface ReadReportCounts extends ReadCounts {
  unmappedColumns: string[];
  ignoredColumns: string[];
}

/** When each part of the run ended, in epoch milliseconds; a part not reached yet is left out. */
export interface RunTimes {
  started: number;
  hashed: number;
  /** The whole file read. */
  read?: number;
  /** The gate opened: sending could start. */
  sending?: number;
  /** Everything written: the report is final. */
  finished?: number;
}

export interface ImportReportParts {
  identity: ReportIdentity;
  read: ReadReportCounts;
  send: SendCounts;
  warnings: WarningCounts;
  changeState?: ImportReport["changeState"];
  /** The run's own warning lines (change-only sending unavailable), before the phases'. */
  notes: readonly string[];
  files: { rejectsFile: string | null; requestsFile: string | null };
  times: RunTimes;
  /** A dry run whose real run would be refused (import_mostly_rejected): why. */
  wouldBeRefused?: string | undefined;
}

/** The read phase's counts before the first row. */
export function noReadCounts(): ReadReportCounts {
  return {
    rowsRead: 0,
    blankRows: 0,
    optInsHeldBack: 0,
    optedOut: 0,
    shortRows: 0,
    rejected: 0,
    rejectedByReason: {},
    rejectedByCode: {},
    unmappedColumns: [],
    ignoredColumns: [],
  };
}

/**
 * The one place an ImportReport is made: from each phase's counts, as they
 * stand. A finished run (times.finished) also gets its duration, speed and
 * the end's checks: a file without rows, and counts that do not add up to
 * the rows read (rowsRead = imported + rejected + duplicates + unchanged).
 * A run that failed gets the counts so far.
 */
export function buildImportReport(parts: ImportReportParts): ImportReport {
  const { identity, read, send, warnings, times } = parts;
  const rejected = read.rejected + send.rejected;
  const rejectedByReason = { ...read.rejectedByReason };
  for (const [reason, n] of Object.entries(send.rejectedByReason)) {
    rejectedByReason[reason] = (rejectedByReason[reason] ?? 0) + n;
  }
  const rejectedByCode = { ...read.rejectedByCode };
  for (const [code, n] of Object.entries(send.rejectedByCode)) {
    rejectedByCode[code] = (rejectedByCode[code] ?? 0) + n;
  }

  const finished = times.finished;
  const lines = [...parts.notes, ...send.warnings];
  if (finished !== undefined && read.rowsRead === 0) lines.push("the file has a header but no rows");
  if (read.shortRows > 0) {
    lines.push(
      `${read.shortRows} row${read.shortRows === 1 ? " had" : "s had"} fewer cells than the header; the missing cells were read as empty`,
    );
  }
  lines.push(...warnings.warnings);
  const accounted = send.imported + rejected + send.duplicates + send.unchanged;
  if (finished !== undefined && accounted !== read.rowsRead) {
    lines.push(
      `counts do not add up: ${read.rowsRead} rows read, ${send.imported} + ${rejected} + ${send.duplicates} + ${send.unchanged} unchanged accounted for`,
    );
  }
  const { durationMs, rowsPerSecond } = runSpeed(times, read.rowsRead);
  return {
    kind: "import",
    job: identity.job,
    file: identity.file,
    status: "completed",
    dryRun: identity.dryRun,
    rowsRead: read.rowsRead,
    imported: send.imported,
    rejected,
    duplicates: send.duplicates,
    blankRows: read.blankRows,
    optInsHeldBack: read.optInsHeldBack,
    optedOut: read.optedOut,
    shortRows: read.shortRows,
    unchanged: send.unchanged,
    batches: send.batches,
    batchesResumed: send.batchesResumed,
    requests: send.requests,
    importIds: send.importIds,
    countMismatches: send.countMismatches,
    rejectsFile: parts.files.rejectsFile,
    requestsFile: parts.files.requestsFile,
    unmappedColumns: read.unmappedColumns,
    unmappedAs: identity.unmappedAs,
    ignoredColumns: read.ignoredColumns,
    rejectedByReason,
    rejectedByCode,
    invalidOptionalValues: warnings.invalidOptionalValues,
    droppedValues: warnings.droppedValues,
    rowsWithDroppedValues: warnings.rowsWithDroppedValues,
    droppedByField: warnings.droppedByField,
    warningsFile: warnings.warningsFile,
    phonesWithoutCountry: warnings.phonesWithoutCountry,
    encoding: identity.encoding,
    delimiter: identity.delimiter,
    fileHash: identity.fileHash,
    definitionHash: identity.definitionHash,
    warnings: lines,
    startedAt: new Date(times.started).toISOString(),
    durationMs,
    phasesMs: {
      hash: times.hashed - times.started,
      read: times.read === undefined ? 0 : times.read - times.hashed,
      send: finished !== undefined && times.sending !== undefined ? finished - times.sending : 0,
    },
    rowsPerSecond,
    ...(parts.wouldBeRefused ? { wouldBeRefused: parts.wouldBeRefused } : {}),
    // Last, where it has always stood in the JSON: it is known only once the gate opens.
    ...(parts.changeState ? { changeState: parts.changeState } : {}),
  };
}

/** A run's length and speed once it finished; zeros while it runs. */
function runSpeed(
  times: { started: number; finished?: number },
  rowsRead: number,
): { durationMs: number; rowsPerSecond: number } {
  if (times.finished === undefined) return { durationMs: 0, rowsPerSecond: 0 };
  const durationMs = times.finished - times.started;
  return { durationMs, rowsPerSecond: Math.round(rowsRead / Math.max(durationMs / 1000, 0.001)) };
}

/** An opt-out run's counts, as it goes. */
export type OptOutCounts = Pick<
  OptOutReport,
  | "rowsRead"
  | "updated"
  | "rejected"
  | "duplicates"
  | "blankRows"
  | "requests"
  | "rejectedByReason"
  | "rejectedByCode"
>;

/** An opt-out run's counts before the first row. */
export function noOptOutCounts(): OptOutCounts {
  return {
    rowsRead: 0,
    updated: 0,
    rejected: 0,
    duplicates: 0,
    blankRows: 0,
    requests: 0,
    rejectedByReason: {},
    rejectedByCode: {},
  };
}

/** The one place an OptOutReport is made, as buildImportReport makes an import's. */
export function buildOptOutReport(parts: {
  identity: Pick<ReportIdentity, "job" | "file" | "dryRun" | "encoding" | "delimiter">;
  optedOut: boolean;
  counts: OptOutCounts;
  files: { rejectsFile: string | null; requestsFile: string | null };
  times: { started: number; finished?: number };
}): OptOutReport {
  const { identity, counts, times } = parts;
  return {
    kind: "opt-out",
    job: identity.job,
    file: identity.file,
    status: "completed",
    dryRun: identity.dryRun,
    optedOut: parts.optedOut,
    rowsRead: counts.rowsRead,
    updated: counts.updated,
    rejected: counts.rejected,
    duplicates: counts.duplicates,
    blankRows: counts.blankRows,
    requests: counts.requests,
    rejectsFile: parts.files.rejectsFile,
    requestsFile: parts.files.requestsFile,
    rejectedByReason: counts.rejectedByReason,
    rejectedByCode: counts.rejectedByCode,
    encoding: identity.encoding,
    delimiter: identity.delimiter,
    warnings: [],
    startedAt: new Date(times.started).toISOString(),
    ...runSpeed(times, counts.rowsRead),
  };
}

/**
 * The report of a run the ledger says was done before: the earlier run's
 * counts, as skipped, nothing sent now.
 */
export function skippedReport(
  done: LedgerRun,
  run: { job: string; file: string; started: number; now: number },
): ImportReport {
  const earlier = done.report as Partial<ImportReport> | undefined;
  return {
    ...(earlier as ImportReport),
    status: "skipped",
    job: run.job,
    file: run.file,
    dryRun: false,
    requests: 0,
    startedAt: new Date(run.started).toISOString(),
    durationMs: run.now - run.started,
    rowsPerSecond: 0,
    warnings: [],
    skippedBecause: `already imported on ${done.finishedAt ?? done.startedAt}`,
  };
}

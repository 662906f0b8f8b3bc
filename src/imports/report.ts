import { z } from "zod";
import { INVALID_OPTIONAL_POLICIES } from "../config/import-job.ts";
import { CountMismatch } from "./count-mismatch.ts";

const count = z.number().int().min(0);

/** What a run did, as JSON (`--report FILE`, a queue job's return value) and as a short summary. */
export const ImportReport = z.object({
  kind: z.literal("import"),
  job: z.string(),
  file: z.string(),
  /** skipped: the same file under the same definition was already imported. */
  status: z.enum(["completed", "skipped"]),
  /** Why a skipped run was skipped: when the ledger saw this file and definition finish. */
  skippedBecause: z.string().optional(),
  dryRun: z.boolean(),
  rowsRead: count,
  imported: count,
  rejected: count,
  /** Rows merged into a later row of the same person. */
  duplicates: count,
  /** All-empty lines: not rows, not counted in rowsRead. */
  blankRows: count,
  /** Rows that said a person is not opted out, not sent (the job's optIn: hold, the default). */
  optInsHeldBack: count.default(0),
  /** Rows whose person is sent opted out (isOptedOut true). */
  optedOut: count.default(0),
  /** Rows with fewer cells than the header, read as if the missing trailing cells were empty. */
  shortRows: count.default(0),
  /** A dry run that the real run of the same file would refuse (import_mostly_rejected): why. */
  wouldBeRefused: z.string().optional(),
  /**
   * People not sent because their mapped data is what the last successful run
   * sent (a dry run: would not be sent). Their merged rows count in duplicates.
   */
  unchanged: count.default(0),
  /**
   * compared: with what earlier runs sent; first: nothing earlier for this
   * service, token, study, population, identifier and mapping, everyone sent;
   * full: everyone sent by request; unavailable: everyone sent, the warnings say why.
   */
  changeState: z.enum(["compared", "first", "full", "unavailable"]).optional(),
  batches: count,
  /** Batches a previous, interrupted run had finished: not sent again. */
  batchesResumed: count,
  requests: count,
  importIds: z.array(z.string()),
  /**
   * Requests whose answer's `count` differed from the people sent, with their
   * batch and import id: their people are marked unverified (unverified-people.ts).
   */
  countMismatches: z.array(CountMismatch).default([]),
  rejectsFile: z.string().nullable(),
  /** Dry run: the request bodies it would have sent, one JSON line per request. */
  requestsFile: z.string().nullable(),
  unmappedColumns: z.array(z.string()),
  unmappedAs: z.enum(["report", "properties"]),
  ignoredColumns: z.array(z.string()),
  rejectedByReason: z.record(z.string(), count),
  /** Rejected rows by code (docs/errors.md, "Row-level codes"; a row with two codes counts under both), the service's own for a row it refused. */
  rejectedByCode: z.record(z.string(), count).default({}),
  /**
   * The job's `invalidOptionalValues`: `drop` imports a person without a
   * failing value outside the identifier, `reject` rejects the row. The
   * defaults below let reports written before these fields parse.
   */
  invalidOptionalValues: z.enum(INVALID_OPTIONAL_POLICIES).default("reject"),
  /** Values left out of imported people (`drop`); each is a line of `warningsFile`. */
  droppedValues: count.default(0),
  /** Imported people who lost at least one value. */
  rowsWithDroppedValues: count.default(0),
  /** Field → reason → values left out. */
  droppedByField: z.record(z.string(), z.record(z.string(), count)).default({}),
  /** The warnings CSV (row, field, column, code, reason), or null when nothing was left out. */
  warningsFile: z.string().nullable().default(null),
  /** Phone values that failed only for want of a default country (`--phone-country`, `phoneCountry`). */
  phonesWithoutCountry: count.default(0),
  encoding: z.string(),
  delimiter: z.string(),
  fileHash: z.string(),
  definitionHash: z.string(),
  warnings: z.array(z.string()),
  startedAt: z.string(),
  durationMs: z.number().min(0),
  /** Where the time went: hashing the file, reading it (read, map, validate), sending (merge, batch, send). */
  phasesMs: z.object({ hash: z.number(), read: z.number(), send: z.number() }),
  rowsPerSecond: z.number().min(0),
});
export type ImportReport = z.infer<typeof ImportReport>;

export const OptOutReport = z.object({
  kind: z.literal("opt-out"),
  job: z.string(),
  file: z.string(),
  status: z.literal("completed"),
  dryRun: z.boolean(),
  optedOut: z.boolean(),
  rowsRead: count,
  updated: count,
  rejected: count,
  duplicates: count,
  blankRows: count,
  requests: count,
  rejectsFile: z.string().nullable(),
  requestsFile: z.string().nullable(),
  rejectedByReason: z.record(z.string(), count),
  /** Rejected rows by code (docs/errors.md, "Row-level codes"; a row with two codes counts under both), the service's own for a row it refused. */
  rejectedByCode: z.record(z.string(), count).default({}),
  encoding: z.string(),
  delimiter: z.string(),
  warnings: z.array(z.string()),
  startedAt: z.string(),
  durationMs: z.number().min(0),
  rowsPerSecond: z.number().min(0),
});
export type OptOutReport = z.infer<typeof OptOutReport>;

/**
 * Where a running import is, for progress bars and the queue: `bytesRead` of
 * `bytesTotal` while hashing (phase hash) and reading (phase read), then
 * batches while sending.
 */
export const ImportProgress = z.object({
  kind: z.literal("import"),
  phase: z.enum(["hash", "read", "send", "rejects", "done"]),
  bytesRead: count,
  bytesTotal: count,
  rowsRead: count,
  imported: count,
  rejected: count,
  duplicates: count,
  batches: count,
  batchesResumed: count,
  requests: count,
});
export type ImportProgress = z.infer<typeof ImportProgress>;

const n = (v: number) => v.toLocaleString("en-US");

/** A few lines for a terminal; no personal data. */
export function formatSummary(r: ImportReport | OptOutReport): string {
  const lines: string[] = [];
  const mode = r.dryRun ? " (dry run: nothing sent)" : "";
  const secs = (r.durationMs / 1000).toFixed(1);
  if (r.kind === "import") {
    if (r.status === "skipped") {
      lines.push(
        `${r.job}: ${r.file} was ${r.skippedBecause ?? "already imported"} with this definition; skipped (use --force to import again)`,
      );
    }
    if (r.wouldBeRefused) lines.push(`${r.job}: ${r.wouldBeRefused}`);
    // A dry run sends nothing: its counts say what a real run would do, and must not read as done.
    const imported = r.dryRun ? `would import ${n(r.imported)}` : `${n(r.imported)} imported`;
    const unchanged = r.changeState === "compared" ? `, ${n(r.unchanged)} unchanged` : "";
    lines.push(
      `${r.job}${mode}: ${n(r.rowsRead)} rows read → ${imported}${unchanged}, ${n(r.rejected)} rejected, ${n(r.duplicates)} merged duplicates`,
    );
    if (r.changeState === "compared" && r.unchanged > 0) {
      lines.push(
        `  ${n(r.unchanged)} people ${r.dryRun ? "would not be" : "were not"} sent: the same as the last run sent (--full sends everyone)`,
      );
    }
    const resumed = r.batchesResumed ? ` (${n(r.batchesResumed)} finished earlier, not resent)` : "";
    const requests = r.dryRun ? "requests it would send" : "requests";
    lines.push(
      `  ${n(r.batches)} batches${resumed}, ${n(r.requests)} ${requests}, ${secs} s, ${n(r.rowsPerSecond)} rows/s`,
    );
    if (r.importIds.length) {
      const shown = r.importIds.slice(0, 3).join(", ");
      lines.push(`  import ids: ${shown}${r.importIds.length > 3 ? `, … (${r.importIds.length})` : ""}`);
    }
    if (r.unmappedColumns.length) {
      const how = r.unmappedAs === "properties" ? "sent as properties" : "not imported";
      lines.push(`  unmapped columns (${how}): ${r.unmappedColumns.join(", ")}`);
    }
    if (r.optedOut > 0) {
      lines.push(
        `  ${n(r.optedOut)} rows ${r.dryRun ? "would opt" : "opted"} their person out (isOptedOut true)`,
      );
    }
    if (r.optInsHeldBack > 0) {
      lines.push(
        `  ${n(r.optInsHeldBack)} rows said "not opted out" and ${r.dryRun ? "would be held back" : "were not sent"}: an import opts nobody back in (optIn: allow in the job sends them)`,
      );
    }
  } else {
    const what = r.optedOut ? "opt out" : "opt back in";
    const updated = r.dryRun
      ? `would ${what} ${n(r.updated)}`
      : `${n(r.updated)} ${r.optedOut ? "opted out" : "opted back in"}`;
    lines.push(
      `${r.job}${mode}: ${n(r.rowsRead)} rows read → ${updated}, ${n(r.rejected)} rejected, ${n(r.duplicates)} duplicates`,
    );
    lines.push(`  ${n(r.requests)} ${r.dryRun ? "requests it would send" : "requests"}, ${secs} s`);
  }
  const reasons = Object.entries(r.rejectedByReason).sort((a, b) => b[1] - a[1]);
  for (const [reason, count] of reasons.slice(0, 5)) lines.push(`  rejected ${n(count)}× ${reason}`);
  if (reasons.length > 5) lines.push(`  … ${reasons.length - 5} more reasons in the report`);
  if (r.kind === "import" && r.droppedValues) {
    const fields = Object.entries(r.droppedByField)
      .map(([field, reasons]) => [field, Object.values(reasons).reduce((a, b) => a + b, 0)] as const)
      .sort((a, b) => b[1] - a[1])
      .map(([field, count]) => `${field} ${n(count)}`);
    lines.push(
      `  left out ${n(r.droppedValues)} invalid or unclear optional values of ${n(r.rowsWithDroppedValues)} ${r.dryRun ? "people it would import" : "imported people"}: ${fields.join(", ")}`,
    );
  }
  if (r.rejectsFile) lines.push(`  rejects: ${r.rejectsFile}`);
  if (r.kind === "import" && r.warningsFile) lines.push(`  values left out: ${r.warningsFile}`);
  if (r.requestsFile) lines.push(`  requests it would send: ${r.requestsFile}`);
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  return lines.join("\n");
}

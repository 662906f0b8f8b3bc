/** What a run did, as JSON (`--report FILE`) and as a short summary. */
export interface ImportReport {
  kind: "import";
  job: string;
  file: string;
  /** skipped: the same file under the same definition was already imported. */
  status: "completed" | "skipped";
  /** Why a skipped run was skipped: when the ledger saw this file and definition finish. */
  skippedBecause?: string;
  dryRun: boolean;
  rowsRead: number;
  imported: number;
  rejected: number;
  /** Rows merged into a later row of the same person. */
  duplicates: number;
  /** All-empty lines: not rows, not counted in rowsRead. */
  blankRows: number;
  batches: number;
  /** Batches a previous, interrupted run had finished: not sent again. */
  batchesResumed: number;
  requests: number;
  importIds: string[];
  rejectsFile: string | null;
  /** Dry run: the request bodies it would have sent, one JSON line per request. */
  requestsFile: string | null;
  unmappedColumns: string[];
  unmappedAs: "report" | "properties";
  ignoredColumns: string[];
  rejectedByReason: Record<string, number>;
  encoding: string;
  delimiter: string;
  fileHash: string;
  definitionHash: string;
  warnings: string[];
  startedAt: string;
  durationMs: number;
  /** Where the time went: hashing the file, the first pass (read, map, validate), the second (merge, batch, send). */
  phasesMs: { hash: number; read: number; send: number };
  rowsPerSecond: number;
}

export interface OptOutReport {
  kind: "opt-out";
  job: string;
  file: string;
  status: "completed";
  dryRun: boolean;
  optedOut: boolean;
  rowsRead: number;
  updated: number;
  rejected: number;
  duplicates: number;
  blankRows: number;
  requests: number;
  rejectsFile: string | null;
  requestsFile: string | null;
  rejectedByReason: Record<string, number>;
  encoding: string;
  delimiter: string;
  warnings: string[];
  startedAt: string;
  durationMs: number;
  rowsPerSecond: number;
}

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
    lines.push(
      `${r.job}${mode}: ${n(r.rowsRead)} rows read → ${n(r.imported)} imported, ${n(r.rejected)} rejected, ${n(r.duplicates)} merged duplicates`,
    );
    const resumed = r.batchesResumed ? ` (${n(r.batchesResumed)} finished earlier, not resent)` : "";
    lines.push(
      `  ${n(r.batches)} batches${resumed}, ${n(r.requests)} requests, ${secs} s, ${n(r.rowsPerSecond)} rows/s`,
    );
    if (r.importIds.length) {
      const shown = r.importIds.slice(0, 3).join(", ");
      lines.push(`  import ids: ${shown}${r.importIds.length > 3 ? `, … (${r.importIds.length})` : ""}`);
    }
    if (r.unmappedColumns.length) {
      const how = r.unmappedAs === "properties" ? "sent as properties" : "not imported";
      lines.push(`  unmapped columns (${how}): ${r.unmappedColumns.join(", ")}`);
    }
  } else {
    const what = r.optedOut ? "opted out" : "opted back in";
    lines.push(
      `${r.job}${mode}: ${n(r.rowsRead)} rows read → ${n(r.updated)} ${what}, ${n(r.rejected)} rejected, ${n(r.duplicates)} duplicates`,
    );
    lines.push(`  ${n(r.requests)} requests, ${secs} s`);
  }
  const reasons = Object.entries(r.rejectedByReason).sort((a, b) => b[1] - a[1]);
  for (const [reason, count] of reasons.slice(0, 5)) lines.push(`  rejected ${n(count)}× ${reason}`);
  if (reasons.length > 5) lines.push(`  … ${reasons.length - 5} more reasons in the report`);
  if (r.rejectsFile) lines.push(`  rejects: ${r.rejectsFile}`);
  if (r.requestsFile) lines.push(`  requests it would send: ${r.requestsFile}`);
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  return lines.join("\n");
}

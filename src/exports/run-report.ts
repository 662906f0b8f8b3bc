import { z } from "zod";
import { EXPORT_RESOURCES } from "../config/job-names.ts";
import { ERROR_CODES } from "../errors/error-codes.ts";

const count = z.number().int().min(0);

export const ResourceReport = z.object({
  status: z.enum(["succeeded", "failed", "interrupted"]),
  rows: count,
  pages: count,
  /** Calls to the service, retries not counted. */
  requests: count,
  /** Rows a full refresh marked `_deleted_at`. */
  deleted: count,
  /** Ids the service did not know (incentives). */
  missing: count,
  /** Full-refresh passes an earlier run of the same unfinished export had finished: kept, not read again. */
  passesKept: count.optional(),
  durationMs: z.number().min(0),
  rowsPerSecond: z.number().min(0),
  error: z.string().optional(),
  /** The failure's code (docs/errors.md) and whether trying again may help. */
  errorCode: z.enum(ERROR_CODES).optional(),
  retryable: z.boolean().optional(),
});
export type ResourceReport = z.infer<typeof ResourceReport>;

/** What one export run did; `--report FILE` writes it as JSON, a queue job returns it. */
export const RunReport = z.object({
  runId: z.string(),
  job: z.string().nullable(),
  /** The sink's URL with any password removed. */
  warehouse: z.string(),
  status: z.enum(["succeeded", "failed", "interrupted"]),
  startedAt: z.string(),
  finishedAt: z.string(),
  durationMs: z.number().min(0),
  resources: z.partialRecord(z.enum(EXPORT_RESOURCES), ResourceReport),
  totals: z.object({ rows: count, pages: count, requests: count, rowsPerSecond: z.number().min(0) }),
  /** The read-back check of each exported study (src/synclog/reconcile.ts): people sent, found or missing. */
  reconciliation: z.array(z.object({ studyId: z.string(), verified: count, missing: count })).optional(),
});
export type RunReport = z.infer<typeof RunReport>;

/** Where a running export is: pages and rows per resource, for progress bars and the queue. */
export const ExportProgress = z.object({
  kind: z.literal("export"),
  runId: z.string(),
  resource: z.enum(EXPORT_RESOURCES).nullable(),
  resources: z.partialRecord(
    z.enum(EXPORT_RESOURCES),
    z.object({
      status: z.enum(["running", "succeeded", "failed", "interrupted"]),
      pages: count,
      rows: count,
    }),
  ),
});
export type ExportProgress = z.infer<typeof ExportProgress>;

/** The report as a few aligned lines for a terminal. */
export function formatRunReport(report: RunReport): string {
  const head = `export ${report.runId}${report.job ? ` (job ${report.job})` : ""} → ${report.warehouse}: ${report.status} in ${(report.durationMs / 1000).toFixed(1)} s`;
  const names = Object.keys(report.resources);
  const width = Math.max(9, ...names.map((n) => n.length));
  const lines = [
    head,
    `  ${"resource".padEnd(width)}  ${"rows".padStart(9)}  ${"pages".padStart(6)}  ${"requests".padStart(8)}  ${"rows/s".padStart(8)}  status`,
  ];
  for (const [name, r] of Object.entries(report.resources)) {
    const extra = [
      r.deleted ? `${r.deleted} marked deleted` : "",
      r.missing ? `${r.missing} not found` : "",
      r.passesKept
        ? `${r.passesKept} ${r.passesKept === 1 ? "pass" : "passes"} kept from an unfinished run`
        : "",
      r.error ? `error: ${r.error}` : "",
    ].filter(Boolean);
    lines.push(
      `  ${name.padEnd(width)}  ${String(r.rows).padStart(9)}  ${String(r.pages).padStart(6)}  ${String(r.requests).padStart(8)}  ${String(r.rowsPerSecond).padStart(8)}  ${r.status}${extra.length ? ` (${extra.join("; ")})` : ""}`,
    );
  }
  const t = report.totals;
  lines.push(
    `  ${"total".padEnd(width)}  ${String(t.rows).padStart(9)}  ${String(t.pages).padStart(6)}  ${String(t.requests).padStart(8)}  ${String(t.rowsPerSecond).padStart(8)}`,
  );
  for (const c of report.reconciliation ?? []) {
    if (c.verified + c.missing === 0) continue;
    lines.push(
      `  read-back check of ${c.studyId}: ${c.verified} verified, ${c.missing} missing${c.missing ? " (recruit-sync reconcile --resend sends them again)" : ""}`,
    );
  }
  return lines.join("\n");
}

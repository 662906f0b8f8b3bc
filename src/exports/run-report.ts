import type { ExportResource } from "../config/export-job.ts";

export interface ResourceReport {
  status: "succeeded" | "failed" | "interrupted";
  rows: number;
  pages: number;
  /** Calls to the service, retries not counted. */
  requests: number;
  /** Rows a full refresh marked `_deleted_at`. */
  deleted: number;
  /** Ids the service did not know (incentives). */
  missing: number;
  durationMs: number;
  rowsPerSecond: number;
  error?: string;
}

/** What one export run did; `--report FILE` writes it as JSON. */
export interface RunReport {
  runId: string;
  job: string | null;
  /** The sink's URL with any password removed. */
  warehouse: string;
  status: "succeeded" | "failed" | "interrupted";
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  resources: Partial<Record<ExportResource, ResourceReport>>;
  totals: { rows: number; pages: number; requests: number; rowsPerSecond: number };
}

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
  return lines.join("\n");
}

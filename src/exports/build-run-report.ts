import type { ExportResource } from "../config/export-job.ts";
import type { ResourceFailure } from "./run-failure.ts";
import type { ResourceReport, RunReport } from "./run-report.ts";
import type { ResourceCounters } from "./stream-context.ts";

function perSecond(rows: number, durationMs: number): number {
  return durationMs > 0 ? Math.round((rows / durationMs) * 1000) : 0;
}

/** One resource's report from its counters and, if it did not succeed, how it failed. */
export function resourceReport(
  counters: ResourceCounters,
  durationMs: number,
  failure: ResourceFailure | undefined,
): ResourceReport {
  return {
    status: failure?.status ?? "succeeded",
    rows: counters.rows,
    pages: counters.pages,
    requests: counters.requests,
    deleted: counters.deleted,
    missing: counters.missing,
    ...(counters.passesKept > 0 ? { passesKept: counters.passesKept } : {}),
    durationMs: Math.round(durationMs),
    rowsPerSecond: perSecond(counters.rows, durationMs),
    ...(failure ? { error: failure.error, errorCode: failure.errorCode, retryable: failure.retryable } : {}),
  };
}

export interface RunReportInput {
  runId: string;
  job: string | null;
  warehouse: string;
  /** The resources the run was to export, in the definition's order. */
  resources: readonly ExportResource[];
  /** The reports of those that were tried, in the same order. */
  reports: Partial<Record<ExportResource, ResourceReport>>;
  startedAt: Date;
  durationMs: number;
  /** The caller aborted the run. */
  aborted: boolean;
}

/** The one place a RunReport is made: a resource not tried, or not succeeded, fails the run. */
export function buildRunReport(input: RunReportInput): RunReport {
  const list = Object.values(input.reports);
  const rows = list.reduce((n, r) => n + r.rows, 0);
  const failed = list.some((r) => r.status !== "succeeded") || list.length < input.resources.length;
  return {
    runId: input.runId,
    job: input.job,
    warehouse: input.warehouse,
    status: failed ? (input.aborted ? "interrupted" : "failed") : "succeeded",
    startedAt: input.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    durationMs: Math.round(input.durationMs),
    resources: input.reports,
    totals: {
      rows,
      pages: list.reduce((n, r) => n + r.pages, 0),
      requests: list.reduce((n, r) => n + r.requests, 0),
      rowsPerSecond: perSecond(rows, input.durationMs),
    },
  };
}

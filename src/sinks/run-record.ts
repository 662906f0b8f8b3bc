import type { SyncRunKind, SyncRunRecord } from "./types.ts";

/** A run's sync_runs row as the parameters $1–$15 of either database's upsertRun; times as ISO text. */
export function upsertRunParams(run: SyncRunRecord): (string | number | null)[] {
  return [
    run.runId,
    run.resource,
    run.startedAt.toISOString(),
    run.finishedAt?.toISOString() ?? null,
    run.status,
    run.pages,
    run.rows,
    run.requests,
    run.error,
    run.kind ?? "export",
    run.job ?? null,
    run.fileHash ?? null,
    run.counts ? JSON.stringify(run.counts) : null,
    run.failureCode ?? null,
    run.file ?? null,
  ];
}

/**
 * How a later write of a run's sync_runs row updates it: its progress and
 * outcome are replaced; its job, file, file hash and counts kept once known.
 */
export const UPSERT_RUN_CONFLICT = `ON CONFLICT (run_id, resource) DO UPDATE SET finished_at = EXCLUDED.finished_at, status = EXCLUDED.status,
  pages = EXCLUDED.pages, rows = EXCLUDED.rows, requests = EXCLUDED.requests, error = EXCLUDED.error,
  kind = EXCLUDED.kind, job = COALESCE(EXCLUDED.job, sync_runs.job), file_hash = COALESCE(EXCLUDED.file_hash, sync_runs.file_hash),
  counts = COALESCE(EXCLUDED.counts, sync_runs.counts), failure_code = EXCLUDED.failure_code,
  file = COALESCE(EXCLUDED.file, sync_runs.file)`;

/** A sync_runs row as read back (counts as JSON text); a row written before `kind` existed reads as an export. */
export function runFromRow(r: Record<string, unknown>): SyncRunRecord {
  const counts = typeof r.counts === "string" ? (JSON.parse(r.counts) as Record<string, number>) : null;
  return {
    runId: String(r.run_id),
    resource: String(r.resource),
    startedAt: r.started_at as Date,
    finishedAt: (r.finished_at as Date | null) ?? null,
    status: String(r.status) as SyncRunRecord["status"],
    pages: Number(r.pages),
    rows: Number(r.rows),
    requests: Number(r.requests),
    error: r.error === null ? null : String(r.error),
    kind: ((r.kind as string | null) ?? "export") as SyncRunKind,
    job: (r.job as string | null) ?? null,
    fileHash: (r.file_hash as string | null) ?? null,
    counts,
    failureCode: (r.failure_code as string | null) ?? null,
    file: (r.file as string | null) ?? null,
  };
}

import type { SyncRunKind, SyncRunRecord } from "./types.ts";

/** The columns sync_runs gained for runs of every kind, as statement parameters $10–$15. */
export function runKindParams(run: SyncRunRecord): (string | null)[] {
  return [
    run.kind ?? "export",
    run.job ?? null,
    run.fileHash ?? null,
    run.counts ? JSON.stringify(run.counts) : null,
    run.failureCode ?? null,
    run.file ?? null,
  ];
}

/** Those columns as read back; a row written before they existed reads as an export. */
export function runKindFields(
  r: Record<string, unknown>,
): Pick<SyncRunRecord, "kind" | "job" | "fileHash" | "counts" | "failureCode" | "file"> {
  const counts = typeof r.counts === "string" ? (JSON.parse(r.counts) as Record<string, number>) : null;
  return {
    kind: ((r.kind as string | null) ?? "export") as SyncRunKind,
    job: (r.job as string | null) ?? null,
    fileHash: (r.file_hash as string | null) ?? null,
    counts,
    failureCode: (r.failure_code as string | null) ?? null,
    file: (r.file as string | null) ?? null,
  };
}

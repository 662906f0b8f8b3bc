import type { SyncRunRecord } from "../../src/sinks/index.ts";

/** An import run's sync_runs record that succeeded, as ImportRunLog writes one. */
export function importRunRecord(runId: string, job: string, file: string): SyncRunRecord {
  return {
    runId,
    resource: "import",
    startedAt: new Date(0),
    finishedAt: new Date(1000),
    status: "succeeded",
    pages: 0,
    rows: 0,
    requests: 0,
    error: null,
    kind: "import",
    job,
    file,
    fileHash: null,
    counts: null,
    failureCode: null,
  };
}

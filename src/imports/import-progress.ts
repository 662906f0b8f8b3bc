import type { ImportCounts } from "./import-counts.ts";
import type { ImportProgress } from "./report.ts";

/** The progress handed to onProgress: the counts as they stand, with the phase and the bytes. */
export function startProgress(bytesTotal: number, tell: ((p: ImportProgress) => void) | undefined) {
  const progress: ImportProgress = {
    kind: "import",
    phase: "hash",
    bytesRead: 0,
    bytesTotal,
    rowsRead: 0,
    imported: 0,
    rejected: 0,
    duplicates: 0,
    batches: 0,
    batchesResumed: 0,
    requests: 0,
  };
  return {
    counts: undefined as ImportCounts | undefined,
    tell(phase: ImportProgress["phase"] = progress.phase, bytesRead = progress.bytesRead) {
      if (!tell) return;
      progress.phase = phase;
      progress.bytesRead = bytesRead;
      if (this.counts) Object.assign(progress, this.counts.progress());
      tell({ ...progress });
    },
  };
}

export type Progress = ReturnType<typeof startProgress>;

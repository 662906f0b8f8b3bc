import { outsideFailure } from "./outside-failures.ts";
import { RecruitSyncError } from "./recruit-sync-error.ts";

/**
 * The one failure rule of every runner: whatever stopped a run leaves as a
 * RecruitSyncError carrying the run's report. An error of ours keeps its code
 * and retryability; anything else (a bug, a driver's own error) becomes
 * `internal`, retryable, since a second attempt is the cheaper way to find out.
 * A failure from outside (Redis out of memory or gone, a full disk) becomes
 * its own error, whose one line says what to change (outside-failures.ts).
 */
export function runFailure(err: unknown, report: unknown): RecruitSyncError {
  const outside = outsideFailure(err);
  if (outside) {
    if (outside.report === undefined) outside.report = report;
    return outside;
  }
  if (err instanceof RecruitSyncError) {
    if (err.report === undefined) err.report = report;
    return err;
  }
  const message = err instanceof Error ? err.message : String(err);
  return new RecruitSyncError("internal", message, { cause: err, retryable: true, report });
}

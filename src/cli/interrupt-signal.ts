import { RecruitSyncError } from "../errors/index.ts";

/**
 * A signal that the first SIGINT or SIGTERM aborts with an `interrupted`
 * error (retryable: the run resumes where it stopped), for a run the command
 * holds in its own process. `release()` once the run is over.
 */
export function interruptSignal(): { signal: AbortSignal; release(): void } {
  const abort = new AbortController();
  const onSignal = () =>
    abort.abort(new RecruitSyncError("interrupted", "interrupted by a signal", { retryable: true }));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return {
    signal: abort.signal,
    release() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

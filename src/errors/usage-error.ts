import { RecruitSyncError } from "./recruit-sync-error.ts";

/** The command line was used wrongly; exit code 2 at the CLI, nothing was run. */
export class UsageError extends RecruitSyncError {
  constructor(message: string) {
    super("usage", message, { retryable: false });
  }
}

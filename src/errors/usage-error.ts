import type { Problem } from "./problems.ts";
import { RecruitSyncError } from "./recruit-sync-error.ts";

/** The command line was used wrongly; exit code 2 at the CLI, nothing was run. */
export class UsageError extends RecruitSyncError {
  /** Each path that is wrong, when the request had named parts (a job's data, its file). */
  readonly problems: readonly Problem[];

  constructor(message: string, problems: readonly Problem[] = []) {
    super("usage", message, { retryable: false });
    this.problems = problems;
  }
}

import type { Problem } from "./problems.ts";
import { RecruitSyncError, type RecruitSyncErrorOptions } from "./recruit-sync-error.ts";

/** A configuration or job definition that cannot be used; exit code 2 at the CLI. */
export class ConfigError extends RecruitSyncError {
  readonly issues: readonly Problem[];

  constructor(message: string, issues: readonly Problem[] = [], options: RecruitSyncErrorOptions = {}) {
    super("config_invalid", message, { ...options, retryable: false });
    this.issues = issues;
  }
}

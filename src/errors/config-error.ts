import { RecruitSyncError, type RecruitSyncErrorOptions } from "./recruit-sync-error.ts";

/** A configuration or job definition that cannot be used; exit code 2 at the CLI. */
export class ConfigError extends RecruitSyncError {
  readonly issues: readonly { path: string; message: string }[];

  constructor(
    message: string,
    issues: readonly { path: string; message: string }[] = [],
    options: RecruitSyncErrorOptions = {},
  ) {
    super("config_invalid", message, { ...options, retryable: false });
    this.issues = issues;
  }
}

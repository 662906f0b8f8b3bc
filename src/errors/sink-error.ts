import { RecruitSyncError, type RecruitSyncErrorOptions } from "./recruit-sync-error.ts";

/** A warehouse write or read failed. Retryable unless the caller says otherwise. */
export class SinkError extends RecruitSyncError {
  constructor(message: string, options: RecruitSyncErrorOptions = {}) {
    super("sink_failed", message, { retryable: true, ...options });
  }
}

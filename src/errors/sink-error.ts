import { RecruitSyncError, type RecruitSyncErrorOptions } from "./recruit-sync-error.ts";

/** What a sink's failure can be: a write or read that failed, or the warehouse's connection lost under it. */
export type SinkErrorCode = "sink_failed" | "sink_connection_lost";

export interface SinkErrorOptions extends RecruitSyncErrorOptions {
  /** Default `sink_failed`. */
  code?: SinkErrorCode;
}

/** A warehouse write or read failed. Retryable unless the caller says otherwise. */
export class SinkError extends RecruitSyncError {
  declare readonly code: SinkErrorCode;
  constructor(message: string, options: SinkErrorOptions = {}) {
    const { code = "sink_failed", ...rest } = options;
    super(code, message, { retryable: true, ...rest });
  }
}

import type { ErrorCode } from "./error-codes.ts";

/**
 * The base of every error recruit-sync raises on purpose. `code` is stable and
 * documented in docs/errors.md; callers branch on it (or on the subclass), never
 * on the message text.
 */
export interface RecruitSyncErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  /** What the run had done when it failed (an import or export report). */
  report?: unknown;
}

export class RecruitSyncError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  /** The failed run's report, when the error ends a run; queue failures keep it. */
  report: unknown;

  constructor(code: ErrorCode, message: string, options: RecruitSyncErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.report = options.report;
  }
}

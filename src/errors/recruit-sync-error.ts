/**
 * The base of every error recruit-sync raises on purpose. `code` is stable and
 * documented in docs/errors.md; callers branch on it (or on the subclass), never
 * on the message text.
 */
export interface RecruitSyncErrorOptions {
  cause?: unknown;
  retryable?: boolean;
}

export class RecruitSyncError extends Error {
  readonly code: string;
  readonly retryable: boolean;

  constructor(code: string, message: string, options: RecruitSyncErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

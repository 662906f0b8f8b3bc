import type { ValidationErrorItem } from "../api/index.ts";
import { IMPORT_ERROR_CODES, RecruitSyncError, type RecruitSyncErrorOptions } from "../errors/index.ts";

export { IMPORT_ERROR_CODES };
export type ImportErrorCode = (typeof IMPORT_ERROR_CODES)[number];

/**
 * A file the pipeline cannot read as a whole (rows it cannot use are rejects,
 * not errors). Not retryable: the same bytes fail the same way.
 */
export class ImportFileError extends RecruitSyncError {
  override readonly code: ImportErrorCode;
  constructor(code: ImportErrorCode, message: string, options: RecruitSyncErrorOptions = {}) {
    super(code, message, { retryable: false, ...options });
    this.code = code;
  }
}

/**
 * The service refused an import request as a whole: a 400 whose errors all
 * point outside `people` (the identifier selector, the population, the body).
 * Fewer people would be refused the same way, so the run stops
 * instead of bisecting; batches finished before stay in the ledger. `errors`
 * are the service's, `cause` its ApiError. Not retryable: the same request
 * fails the same way.
 */
export class ImportRefusedError extends RecruitSyncError {
  override readonly code = "import_rejected_batch" as const;
  readonly errors: readonly ValidationErrorItem[];
  constructor(
    message: string,
    errors: readonly ValidationErrorItem[],
    options: RecruitSyncErrorOptions = {},
  ) {
    super("import_rejected_batch", message, { ...options, retryable: false });
    this.errors = errors;
  }
}

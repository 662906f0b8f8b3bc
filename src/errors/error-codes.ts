/**
 * Every code a RecruitSyncError can carry: one closed list, each documented
 * in docs/errors.md (test/errors/error-codes.test.ts fails when the two
 * disagree). The groups whose subclasses narrow `code` (ApiError,
 * ImportFileError) are lists of their own, part of this one.
 */
/** Answers of the service (src/api): ApiError's codes. */
export const API_ERROR_CODES = [
  "bad_request",
  "validation_failed",
  "unauthorized",
  "forbidden",
  "not_found",
  "conflict",
  "rate_limited",
  "server_error",
  "http_error",
  "network_error",
  "timeout",
  "unexpected_response",
] as const;

/** A file an import cannot use as a whole (src/imports): ImportFileError's and ImportRefusedError's codes. */
export const IMPORT_ERROR_CODES = [
  "file_unreadable",
  "file_not_allowed",
  "file_empty",
  "file_binary",
  "file_unclosed_quote",
  "file_record_too_large",
  "file_unparseable",
  "file_duplicate_header",
  "file_missing_column",
  "file_missing_identifier",
  "import_rejected_batch",
  "import_mostly_rejected",
] as const;

export const ERROR_CODES = [
  // Configuration, usage, the runner, the queue
  "config_invalid",
  "usage",
  "service_address",
  "sink_failed",
  "sink_connection_lost",
  "internal",
  "interrupted",
  "export_failed",
  "export_items_failed",
  "budget_paused",
  "run_locked",
  "warehouse_file_locked",
  "job_failed",
  "job_lost",
  "job_data_invalid",
  "file_symlink",
  // Outside the run: what to change is said in the message (outside-failures.ts)
  "redis_out_of_memory",
  "redis_unavailable",
  "disk_full",
  "alert_undelivered",
  ...API_ERROR_CODES,
  ...IMPORT_ERROR_CODES,
  // The ops server's HTTP answers
  "ops_unauthorized",
  "ops_too_many_wrong_passwords",
  "ops_job_unknown",
  "ops_invalid_overrides",
  "ops_invalid_query",
  "ops_job_invalid",
  "ops_redis_down",
  "ops_jobs_unreadable",
  "ops_bad_request",
  // The console's API (src/ops/console)
  "ops_invalid_request",
  "ops_cross_site",
  "ops_upload_unknown",
  "ops_upload_too_large",
  "ops_upload_not_csv",
  "ops_upload_second_file",
  "ops_upload_quota_full",
  "ops_run_unknown",
  "ops_rejects_unavailable",
  "ops_job_exists",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

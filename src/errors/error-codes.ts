/**
 * Every code a RecruitSyncError can carry: one closed list, each documented
 * in docs/errors.md (test/errors/error-codes.test.ts fails when the two
 * disagree). Grouped by where the error is raised; the groups' own lists
 * (API_ERROR_CODES, IMPORT_ERROR_CODES) are checked against this one.
 */
export const ERROR_CODES = [
  // Configuration, usage, the runner
  "config_invalid",
  "usage",
  "service_address",
  "sink_failed",
  "internal",
  "interrupted",
  "export_failed",
  "export_items_failed",
  "budget_paused",
  "run_locked",
  "job_failed",
  "job_data_invalid",
  // Answers of the service (src/api)
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
  // A file an import cannot read (src/imports, the watched folder)
  "file_unreadable",
  "file_empty",
  "file_binary",
  "file_unclosed_quote",
  "file_record_too_large",
  "file_unparseable",
  "file_duplicate_header",
  "file_missing_column",
  "file_missing_identifier",
  "file_symlink",
  "import_rejected_batch",
  // The ops server's HTTP answers
  "ops_unauthorized",
  "ops_job_unknown",
  "ops_invalid_overrides",
  "ops_invalid_query",
  "ops_job_invalid",
  "ops_redis_down",
  "ops_jobs_unreadable",
  "ops_bad_request",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Whether a code read back (from a job's progress, a report) is one of ours. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && (ERROR_CODES as readonly string[]).includes(value);
}

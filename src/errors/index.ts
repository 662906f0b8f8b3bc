export { ConfigError } from "./config-error.ts";
export {
  API_ERROR_CODES,
  ERROR_CODES,
  type ErrorCode,
  IMPORT_ERROR_CODES,
} from "./error-codes.ts";
export { describeProblems, type Problem, type ProblemsOptions, problemsOf } from "./problems.ts";
export { RecruitSyncError, type RecruitSyncErrorOptions, runFailure } from "./recruit-sync-error.ts";
export { ServiceAddressError } from "./service-address-error.ts";
export { SinkError, type SinkErrorCode, type SinkErrorOptions } from "./sink-error.ts";
export { UsageError } from "./usage-error.ts";
export {
  describeHolder,
  type FileLockHolder,
  WarehouseFileLockedError,
} from "./warehouse-file-locked-error.ts";

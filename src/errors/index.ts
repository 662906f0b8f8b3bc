export { AlertDeliveryError } from "./alert-delivery-error.ts";
export { ConfigError } from "./config-error.ts";
export {
  API_ERROR_CODES,
  ERROR_CODES,
  type ErrorCode,
  IMPORT_ERROR_CODES,
} from "./error-codes.ts";
export {
  DiskFullError,
  isDiskFull,
  noteRedisAddress,
  noteRedisGaveUp,
  outsideFailure,
  RedisGoneError,
  RedisOutOfMemoryError,
  type WrittenFile,
  writeFailure,
} from "./outside-failures.ts";
export { describeProblems, Problem, type ProblemsOptions, problemsOf } from "./problems.ts";
export { RecruitSyncError, type RecruitSyncErrorOptions } from "./recruit-sync-error.ts";
export { runFailure } from "./run-failure.ts";
export { ServiceAddressError } from "./service-address-error.ts";
export { SinkError, type SinkErrorCode, type SinkErrorOptions } from "./sink-error.ts";
export { UsageError } from "./usage-error.ts";
export {
  describeHolder,
  type FileLockHolder,
  WarehouseFileLockedError,
} from "./warehouse-file-locked-error.ts";

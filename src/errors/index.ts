export { AlertDeliveryError } from "./alert-delivery-error.ts";
export { ConfigError } from "./config-error.ts";
export {
  API_ERROR_CODES,
  ERROR_CODES,
  type ErrorCode,
  IMPORT_ERROR_CODES,
  isErrorCode,
} from "./error-codes.ts";
export { describeProblems, type Problem, type ProblemsOptions, problemsOf } from "./problems.ts";
export { RecruitSyncError, type RecruitSyncErrorOptions, runFailure } from "./recruit-sync-error.ts";
export { ServiceAddressError } from "./service-address-error.ts";
export { SinkError } from "./sink-error.ts";
export { UsageError } from "./usage-error.ts";

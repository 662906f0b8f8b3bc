export {
  ApiClient,
  type CallInput,
  type ClientOptions,
  createClient,
  type PagingOptions,
  type ResponseContext,
  toApiError,
} from "./client.ts";
export { RESET_UNITS, type ResetUnit, SPEC_DEFAULTS } from "./decisions.ts";
export {
  type Endpoint,
  type Endpoints,
  endpoints,
  fillPath,
  OPERATION_IDS,
  type OperationId,
  PERMISSIONS,
  type Permission,
} from "./endpoints.ts";
export * from "./errors.ts";
export { buildOpenApi } from "./openapi.ts";
export {
  detectResetUnit,
  parseRateLimitHeaders,
  parseRetryAfter,
  type RateLimitInfo,
  resetToEpochMs,
} from "./rate-limit-headers.ts";
export { backoffDelay, DEFAULT_RETRY, type RetryOptions } from "./retry-policy.ts";
export * from "./schemas/index.ts";

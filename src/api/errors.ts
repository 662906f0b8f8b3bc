import { API_ERROR_CODES, RecruitSyncError } from "../errors/index.ts";
import type { ValidationErrorItem } from "./schemas/index.ts";

export { API_ERROR_CODES };
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export interface ApiErrorOptions {
  status?: number | undefined;
  operationId: string;
  body?: string | undefined;
  cause?: unknown;
  retryable: boolean;
}

/** Any failed call to the service. `status` is absent for network faults and timeouts. */
export class ApiError extends RecruitSyncError {
  override readonly code: ApiErrorCode;
  readonly status: number | undefined;
  readonly operationId: string;
  /** The response body as text, when there was one (never logged: it may hold personal data). */
  readonly body: string | undefined;

  constructor(code: ApiErrorCode, message: string, options: ApiErrorOptions) {
    super(code, message, { cause: options.cause, retryable: options.retryable });
    this.code = code;
    this.status = options.status;
    this.operationId = options.operationId;
    this.body = options.body;
  }
}

/** 400 with the JSON body `{errors:[{message,path}]}`: schema validation failed. */
export class ValidationApiError extends ApiError {
  readonly errors: ValidationErrorItem[];
  constructor(operationId: string, errors: ValidationErrorItem[], body: string) {
    const first = errors[0];
    const where = first ? ` at ${first.path.join(".") || "(body)"}: ${first.message}` : "";
    super("validation_failed", `${operationId}: the service refused the request${where}`, {
      status: 400,
      operationId,
      body,
      retryable: false,
    });
    this.errors = errors;
  }
}

/** 404 `{Resource} not found`; `resource` is the kind the service named. */
export class NotFoundApiError extends ApiError {
  readonly resource: string;
  constructor(operationId: string, resource: string, body: string) {
    super("not_found", `${operationId}: ${resource} not found`, {
      status: 404,
      operationId,
      body,
      retryable: false,
    });
    this.resource = resource;
  }
}

/** 429 after every retry was spent; `retryAfterMs` is the service's last word on the wait. */
export class RateLimitedApiError extends ApiError {
  readonly retryAfterMs: number | undefined;
  constructor(operationId: string, retryAfterMs: number | undefined, body: string) {
    const wait = retryAfterMs === undefined ? "" : ` (retry after ${Math.ceil(retryAfterMs / 1000)} s)`;
    super("rate_limited", `${operationId}: rate limited by the service${wait}`, {
      status: 429,
      operationId,
      body,
      retryable: true,
    });
    this.retryAfterMs = retryAfterMs;
  }
}

/** A 2xx whose body does not match the contract. */
export class UnexpectedResponseError extends ApiError {
  /** Where the body departs from the contract, in the shape of the service's own error items. */
  readonly issues: ValidationErrorItem[];
  constructor(operationId: string, status: number, issues: ValidationErrorItem[], cause?: unknown) {
    const first = issues[0];
    const where = first ? `: ${first.path.join(".") || "(body)"} ${first.message}` : "";
    super("unexpected_response", `${operationId}: the response does not match the contract${where}`, {
      status,
      operationId,
      cause,
      retryable: false,
    });
    this.issues = issues;
  }
}

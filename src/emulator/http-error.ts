import type { ValidationErrorItem } from "../api/index.ts";

/**
 * An error answer of the service (spec 7). Handlers throw it; the route layer
 * turns it into a text body, or the JSON `{errors}` body for schema failures.
 */
export class EmulatorHttpError extends Error {
  readonly status: number;
  readonly errors: ValidationErrorItem[] | undefined;
  /** Why a terse text answer ("Bad Request") was given; sent as a header for debugging. */
  readonly reason: string | undefined;

  constructor(
    status: number,
    message: string,
    options: { errors?: ValidationErrorItem[]; reason?: string } = {},
  ) {
    super(message);
    this.status = status;
    this.errors = options.errors;
    this.reason = options.reason;
  }
}

export const notFound = (resource: string): EmulatorHttpError =>
  new EmulatorHttpError(404, `${resource} not found`);

/** A domain rule refused the request: plain text `Bad Request`, the reason in X-Emulator-Reason. */
export const badRequest = (reason: string): EmulatorHttpError =>
  new EmulatorHttpError(400, "Bad Request", { reason });

export const validationFailed = (errors: ValidationErrorItem[]): EmulatorHttpError =>
  new EmulatorHttpError(400, "Bad Request", { errors });

export const notDraft = (): EmulatorHttpError => new EmulatorHttpError(409, "Study is not in draft status");

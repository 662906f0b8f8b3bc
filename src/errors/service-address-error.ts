import { RecruitSyncError } from "./recruit-sync-error.ts";

/**
 * The service's base URL does not lead to the service: a call the contract
 * says never answers 404 got a 404. Every other call would meet the same, so
 * a run stops at once (not retryable: only a new address mends it).
 */
export class ServiceAddressError extends RecruitSyncError {
  constructor(message: string) {
    super("service_address", message, { retryable: false });
  }
}

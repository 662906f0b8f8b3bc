import { RecruitSyncError, type RecruitSyncErrorOptions } from "./recruit-sync-error.ts";

/** An alert's channel did not take it. Retryable unless the receiver refused it for good. */
export class AlertDeliveryError extends RecruitSyncError {
  /** The channel's name in alerts.channels. */
  readonly channel: string;
  constructor(channel: string, message: string, options: RecruitSyncErrorOptions = {}) {
    super("alert_undelivered", message, { retryable: true, ...options });
    this.channel = channel;
  }
}

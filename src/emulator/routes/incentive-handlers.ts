import { notFound } from "../http-error.ts";
import { effectiveIncentiveStatus } from "../incentive-expiry.ts";
import type { Handler } from "./handler-types.ts";

/** Keeps the first character and the domain: enough to tell records apart, not to write to anyone. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  if (at <= 0) return "***";
  return `${email[0]}***${email.slice(at)}`;
}

export const getIncentive: Handler<"getIncentive"> = ({ store, clock, grant }, { params }) => {
  const incentive = store.incentives.get(params.incentiveId);
  if (!incentive) throw notFound("Incentive");
  const email = incentive.recipientEmail;
  return {
    ...incentive,
    status: effectiveIncentiveStatus(incentive, clock.now()),
    recipientEmail:
      email === null || grant.permissions.has("view_incentive_recipients") ? email : maskEmail(email),
  };
};

export const getCustomIncentive: Handler<"getCustomIncentive"> = ({ store }, { params }) => {
  const custom = store.customIncentives.get(params.customIncentiveId);
  if (!custom) throw notFound("Custom incentive");
  return custom;
};

import type { Incentive } from "../api/index.ts";

/** Incentives sent after this day can expire (spec 3.4: "sent after 2026-01-31"). */
export const EXPIRY_APPLIES_FROM = Date.parse("2026-02-01T00:00:00.000Z");

/**
 * The status an incentive has at `now`: UNCLAIMED, sent after 2026-01-31 and
 * a full calendar year old is EXPIRED. Derived on read from the emulator's
 * clock, so moving the clock is all a test needs.
 */
export function effectiveIncentiveStatus(incentive: Incentive, now: number): Incentive["status"] {
  if (incentive.status !== "UNCLAIMED" || !incentive.sentAt) return incentive.status;
  const sent = Date.parse(incentive.sentAt);
  if (Number.isNaN(sent) || sent < EXPIRY_APPLIES_FROM) return incentive.status;
  const expires = new Date(sent);
  expires.setUTCFullYear(expires.getUTCFullYear() + 1);
  return now >= expires.getTime() ? "EXPIRED" : incentive.status;
}

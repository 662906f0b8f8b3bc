import type { ResetUnit } from "./decisions.ts";

/** The service's rate budget as one response reported it. */
export interface RateLimitInfo {
  limit: number;
  remaining: number;
  /** When the window resets, epoch milliseconds. */
  resetAt: number;
  /** The unit the Reset header was read in (detected or configured). */
  resetUnit: Exclude<ResetUnit, "auto">;
  /**
   * How coarse the Reset value is, ms: 1000 for whole seconds, 100 for one
   * decimal, 1 for epoch milliseconds. A service that rounds up puts the
   * real reset within (resetAt - resetPrecisionMs, resetAt].
   */
  resetPrecisionMs: number;
}

/** What the parsers read headers through: a WHATWG `Headers`, or the transport's getter over node's header object. */
export type HeaderGetter = { get(name: string): string | null };

/**
 * Past this many seconds a Reset value cannot be a delta: no rate window is
 * that long, so it is an epoch. 1e12 separates epoch seconds from epoch
 * milliseconds until the year 33658.
 */
const MAX_DELTA_SECONDS = 10 * 365 * 24 * 3600;
const EPOCH_MS_THRESHOLD = 1e12;

export function detectResetUnit(value: number): Exclude<ResetUnit, "auto"> {
  if (value >= EPOCH_MS_THRESHOLD) return "epoch-milliseconds";
  if (value > MAX_DELTA_SECONDS) return "epoch-seconds";
  return "delta-seconds";
}

export function resetToEpochMs(value: number, unit: Exclude<ResetUnit, "auto">, now: number): number {
  switch (unit) {
    case "delta-seconds":
      return now + value * 1000;
    case "epoch-seconds":
      return value * 1000;
    case "epoch-milliseconds":
      return value;
  }
}

function num(h: HeaderGetter, name: string): number | undefined {
  const raw = h.get(name);
  if (raw === null || raw.trim() === "") return undefined;
  const n = Number(raw.trim());
  return Number.isFinite(n) ? n : undefined;
}

/** Reads X-RateLimit-Limit/Remaining/Reset; undefined when any is absent or not a number. */
export function parseRateLimitHeaders(
  headers: HeaderGetter,
  unit: ResetUnit = "auto",
  now: number = Date.now(),
): RateLimitInfo | undefined {
  const limit = num(headers, "x-ratelimit-limit");
  const remaining = num(headers, "x-ratelimit-remaining");
  const reset = num(headers, "x-ratelimit-reset");
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  const resetUnit = unit === "auto" ? detectResetUnit(reset) : unit;
  return {
    limit,
    remaining,
    resetAt: resetToEpochMs(reset, resetUnit, now),
    resetUnit,
    resetPrecisionMs: precisionMs(headers.get("x-ratelimit-reset") ?? "", resetUnit),
  };
}

/** The step of the value as written: "12" seconds is 1000 ms, "12.25" is 10 ms. */
function precisionMs(raw: string, unit: Exclude<ResetUnit, "auto">): number {
  const unitMs = unit === "epoch-milliseconds" ? 1 : 1000;
  const decimals = /\.(\d+)$/.exec(raw.trim())?.[1]?.length ?? 0;
  return Math.max(1, unitMs / 10 ** decimals);
}

/** Retry-After as delta seconds or an HTTP date, in milliseconds from now; undefined when unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  // An HTTP date always names its day or month; bare numbers like "-3" are not dates.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

import { ConfigError } from "../errors/index.ts";

export const RATE_LIMIT_RESET_UNITS = ["delta-seconds", "epoch-seconds"] as const;
export type RateLimitResetUnit = (typeof RATE_LIMIT_RESET_UNITS)[number];

export interface RateLimitOptions {
  requests: number;
  windowSeconds: number;
  resetUnit: RateLimitResetUnit;
}

export const DEFAULT_RATE_LIMIT = { requests: 600, windowSeconds: 60 } as const;

/** Parses `REQUESTS/SECONDSs`, e.g. `600/60s`; `off` disables limiting. */
export function parseRateLimit(text: string): { requests: number; windowSeconds: number } | false {
  if (text.trim().toLowerCase() === "off") return false;
  const m = /^\s*(\d+)\s*\/\s*(\d+(?:\.\d+)?)\s*s?\s*$/.exec(text);
  const requests = Number(m?.[1]);
  const windowSeconds = Number(m?.[2]);
  if (!m || !(requests > 0) || !(windowSeconds > 0)) {
    throw new ConfigError(`rate limit "${text}" is not REQUESTS/SECONDSs (e.g. 600/60s) or "off"`);
  }
  return { requests, windowSeconds };
}

export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

interface Window {
  startedAt: number;
  used: number;
}

/**
 * A fixed window per token: the first request opens a window of
 * `windowSeconds`; the quota refills when it ends. Fixed windows make the
 * Reset header exact, which is what a client's throttle reads.
 */
export class RateLimiter {
  readonly #windows = new Map<string, Window>();
  options: RateLimitOptions | false;

  constructor(options: RateLimitOptions | false) {
    this.options = options;
  }

  #window(key: string, now: number): Window | undefined {
    if (this.options === false) return undefined;
    let w = this.#windows.get(key);
    if (!w || now >= w.startedAt + this.options.windowSeconds * 1000) {
      w = { startedAt: now, used: 0 };
      this.#windows.set(key, w);
    }
    return w;
  }

  /** Spends one request of `key`'s quota when there is one left. */
  take(key: string, now: number = Date.now()): RateDecision {
    const w = this.#window(key, now);
    if (this.options === false || !w) return { allowed: true, headers: {} };
    const allowed = w.used < this.options.requests;
    if (allowed) w.used++;
    return { allowed, headers: this.#headers(w, now, !allowed) };
  }

  /** The headers of `key`'s window without spending from it. */
  peek(key: string, now: number = Date.now()): Record<string, string> {
    const w = this.#window(key, now);
    if (this.options === false || !w) return {};
    return this.#headers(w, now, false);
  }

  /** Headers of a refusal that did not come from the quota (a 429 storm fault). */
  exhaustedHeaders(key: string, now: number = Date.now()): Record<string, string> {
    const w = this.#window(key, now);
    if (this.options === false || !w) {
      return {
        "x-ratelimit-limit": "0",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": "1",
        "retry-after": "1",
      };
    }
    return { ...this.#headers(w, now, true), "x-ratelimit-remaining": "0" };
  }

  #headers(w: Window, now: number, refused: boolean): Record<string, string> {
    const o = this.options as RateLimitOptions;
    const resetAt = w.startedAt + o.windowSeconds * 1000;
    const secondsLeft = Math.max(1, Math.ceil((resetAt - now) / 1000));
    const headers: Record<string, string> = {
      "x-ratelimit-limit": String(o.requests),
      "x-ratelimit-remaining": String(Math.max(0, o.requests - w.used)),
      "x-ratelimit-reset":
        o.resetUnit === "epoch-seconds" ? String(Math.ceil(resetAt / 1000)) : String(secondsLeft),
    };
    if (refused) headers["retry-after"] = String(secondsLeft);
    return headers;
  }

  reset(): void {
    this.#windows.clear();
  }
}

import { CONNECT_TIMEOUT_CODE } from "./transport.ts";

/** How the client spaces and bounds its retries. */
export interface RetryOptions {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited out in-process: the call fails as rate_limited. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
};

/**
 * Exponential backoff with full jitter: a random wait in [0, base·2^attempt],
 * capped. Full jitter spreads a fleet of workers that failed together.
 */
export function backoffDelay(
  attempt: number,
  opts: RetryOptions,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(random() * ceiling);
}

/**
 * Errors of the transport that mean the request never reached the server, so
 * any call may be resent: node:http's own connect errors, the transport's
 * connect timeout, and undici's (a `fetch` given in ClientOptions).
 */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  CONNECT_TIMEOUT_CODE,
  "UND_ERR_CONNECT_TIMEOUT",
]);

export function requestNeverSent(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && NOT_SENT_CODES.has(code)) return true;
    e = e.cause;
  }
  return false;
}

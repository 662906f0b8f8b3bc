import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { ResponseContext } from "../api/index.ts";
import { ACQUIRE_SCRIPT, OBSERVE_SCRIPT } from "./governor-script.ts";

export interface RateGovernorOptions {
  redis: Redis;
  /** The API token whose budget this is; only a hash of it reaches Redis. */
  token: string;
  /**
   * The service the token is for (its base URL): the budget is the token's at
   * that service, so one learned from the emulator never throttles production.
   */
  service: string;
  /** Key prefix shared by the fleet, e.g. config redis.prefix. */
  prefix: string;
  /**
   * Requests kept back from the reported remaining budget, so requests already
   * in flight across the fleet do not push it past zero. At least the fleet's
   * concurrency.
   */
  headroom?: number;
  /** Window length assumed before any response has shown one. */
  fallbackWindowMs?: number;
  /** Extra random wait up to this many ms, so waiting workers do not wake as one. */
  jitterMs?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
}

/**
 * One rate budget per API token, held in Redis and shared by every worker
 * process that uses the token. It learns the budget from the service's
 * X-RateLimit-* headers and Retry-After, and makes callers wait before a
 * request would exceed it.
 *
 * @example
 * const governor = createRateGovernor({ redis, token, prefix: "recruit-sync" });
 * const client = createClient({ baseUrl, token, ...governor.clientHooks() });
 */
export class RateGovernor {
  readonly key: string;
  readonly #o: Required<Omit<RateGovernorOptions, "signal" | "sleep">> &
    Pick<RateGovernorOptions, "signal" | "sleep">;
  /** Milliseconds spent waiting, for reports and benchmarks. */
  waitedMs = 0;

  constructor(options: RateGovernorOptions) {
    const budgetHash = createHash("sha256")
      .update(`${options.service.replace(/\/+$/, "")}\n${options.token}`)
      .digest("hex")
      .slice(0, 16);
    this.key = `${options.prefix}:governor:${budgetHash}`;
    this.#o = { headroom: 0, fallbackWindowMs: 60_000, jitterMs: 25, ...options };
  }

  /** Resolves when one request may be sent. */
  async acquire(signal?: AbortSignal): Promise<void> {
    const s = signal ?? this.#o.signal;
    for (;;) {
      s?.throwIfAborted();
      const wait = Number(
        await this.#o.redis.eval(ACQUIRE_SCRIPT, 1, this.key, this.#o.headroom, this.#o.fallbackWindowMs),
      );
      if (wait <= 0) return;
      const total = wait + Math.round(Math.random() * this.#o.jitterMs);
      this.waitedMs += total;
      await (this.#o.sleep ?? sleep)(total, s);
    }
  }

  /** Feeds one response's headers (and Retry-After on a 429) into the shared state. */
  async observe(ctx: Pick<ResponseContext, "rateLimit" | "retryAfterMs">): Promise<void> {
    const rl = ctx.rateLimit;
    if (!rl && ctx.retryAfterMs === undefined) return;
    await this.#o.redis.eval(
      OBSERVE_SCRIPT,
      1,
      this.key,
      rl?.limit ?? -1,
      rl?.remaining ?? -1,
      rl?.resetAt ?? Date.now(),
      ctx.retryAfterMs ?? -1,
      Date.now(),
    );
  }

  /** The budget as Redis holds it now (for tests and the ops API). */
  async state(): Promise<{ limit?: number; remaining?: number; resetAt?: number }> {
    const h = await this.#o.redis.hgetall(this.key);
    const n = (v: string | undefined) => (v === undefined ? undefined : Number(v));
    return { limit: n(h.limit), remaining: n(h.remaining), resetAt: n(h.resetAt) };
  }

  /** The two client hooks, ready to spread into createClient's options. */
  clientHooks(): {
    beforeRequest: (operationId: string, signal: AbortSignal | undefined) => Promise<void>;
    onResponse: (ctx: ResponseContext) => Promise<void>;
  } {
    return {
      beforeRequest: (_operationId, signal) => this.acquire(signal),
      onResponse: (ctx) => this.observe(ctx),
    };
  }
}

/** A wait that an abort ends at once; the listener goes when the wait does, so long runs do not pile them up. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export function createRateGovernor(options: RateGovernorOptions): RateGovernor {
  return new RateGovernor(options);
}

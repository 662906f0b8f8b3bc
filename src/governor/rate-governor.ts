import { createHash, randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { z } from "zod";
import type { OperationId, ResponseContext } from "../api/index.ts";
import { type BudgetKeys, budgetKeys, keyList } from "./budget-keys.ts";
import {
  ACQUIRE_SCRIPT,
  OBSERVE_AND_TAKE_SCRIPT,
  OBSERVE_SCRIPT,
  RELEASE_SCRIPT,
  STATE_SCRIPT,
  UNREGISTER_SCRIPT,
} from "./governor-script.ts";

/** `interactive`: a person waits for the result; it gets the next slot before any `background` request. */
export type Priority = "interactive" | "background";

/** Told before every wait: how long, and until when. Throwing ends the acquire with that error. */
export type OnWait = (ms: number, until: Date) => void;

export interface RateGovernorOptions {
  /** A standalone or cluster connection; only EVAL/EVALSHA and ZREM are used. */
  redis: Pick<Redis, "eval" | "evalsha">;
  /** The API token whose budget this is; only a hash of it reaches Redis. */
  token: string;
  /**
   * The service the token is for (its base URL): the budget is the token's at
   * that service, so one learned from the emulator never throttles production.
   */
  service: string;
  /** Key prefix shared by the fleet, e.g. config redis.prefix (`{recruit-sync}` on a cluster). */
  prefix: string;
  /** Priority of acquires that do not name one (default interactive). */
  priority?: Priority;
  /**
   * Requests kept back from the reported remaining budget on top of those in
   * flight, for clients outside the governor that share the token (default 0).
   */
  headroom?: number;
  /**
   * How long a granted request counts as in flight when no answer or release
   * comes (its process was killed). Longer than the client's per-attempt timeout.
   */
  leaseMs?: number;
  /** Window length assumed before any response has shown one. */
  fallbackWindowMs?: number;
  /** How often to look again while the budget is held by requests in flight elsewhere. */
  pollMs?: number;
  /** Extra random wait up to this many ms after a reset, so waiting workers do not wake as one. */
  jitterMs?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
}

export interface AcquireOptions {
  priority?: Priority;
  signal?: AbortSignal | undefined;
  onWait?: OnWait;
}

/** One granted request; hand it back to observe or release. */
export interface Permit {
  readonly id: string;
  /** Window generation the request was granted in. */
  readonly gen: number;
  /** Redis time of the grant: the request reached the service no earlier. */
  readonly grantedAt: number;
  /** Time this acquire spent waiting, ms. */
  readonly waitedMs: number;
}

/** The budget as Redis holds it now, in this process's clock. */
export interface GovernorState {
  limit: number | undefined;
  /** Lowest remaining the service reported in the current window. */
  remaining: number | undefined;
  /** Latest the current window can reset (epoch ms). */
  resetAt: number | undefined;
  /** Earliest it can reset (epoch ms). */
  resetEarliest: number | undefined;
  inFlight: number;
  waiting: { interactive: number; background: number };
  /** Set while nothing may be sent until the reset (epoch ms). */
  pausedUntil: number | undefined;
}

export interface ClientHooks {
  beforeRequest: (operationId: OperationId, signal: AbortSignal | undefined) => Promise<Permit>;
  onResponse: (ctx: ResponseContext) => void;
  afterRequest: (permit: unknown) => Promise<void>;
}

const AcquireReply = z.tuple([z.coerce.number(), z.coerce.number(), z.coerce.number()]);
const ObserveAndTakeReply = z.tuple([
  z.coerce.number(),
  z.coerce.number(),
  z.coerce.number(),
  z.coerce.number(),
]);
const opt = z.union([z.literal(""), z.coerce.number()]).transform((v) => (v === "" ? undefined : v));
const StateReply = z.tuple([
  z.coerce.number(),
  opt,
  opt,
  opt,
  opt,
  opt,
  z.coerce.number(),
  z.coerce.number(),
  z.coerce.number(),
  opt,
]);

/** A waiter re-registers every time it looks; this long past its planned wake it counts as gone. */
const WAITER_GRACE_MS = 2000;
/** A permit taken ahead that no request claims within this long goes back to the budget. */
const SPARE_IDLE_MS = 100;
/** Permits one client may hold ahead: one per request it has in flight, within reason. */
const MAX_AHEAD = 2;
/** Cleanup after an abort must not hold the abort up when Redis is unreachable: the registration expires anyway. */
const CLEANUP_TIMEOUT_MS = 1000;

/**
 * One rate budget per API token and service, held in Redis and shared by
 * every worker process that uses them. It learns the budget from the
 * service's X-RateLimit-* headers and Retry-After, keeps back only the
 * requests in flight, and makes callers wait before a request would exceed
 * it — interactive callers ahead of background ones.
 *
 * @example
 * const governor = createRateGovernor({ redis, token, service: baseUrl, prefix: "recruit-sync" });
 * const client = createClient({ baseUrl, token, ...governor.clientHooks({ priority: "background" }) });
 */
export class RateGovernor {
  readonly keys: BudgetKeys;
  readonly #o: Required<Omit<RateGovernorOptions, "signal" | "sleep">> &
    Pick<RateGovernorOptions, "signal" | "sleep">;
  /** Short waits of this process, woken early when one of its own requests settles. */
  readonly #pollers = new Set<() => void>();
  /** Permits whose answer was observed: releasing them again would be a wasted round trip. */
  readonly #answered = new WeakSet<Permit>();
  /** Observations and permits taken ahead, sent by the client hooks and not yet confirmed. */
  readonly #pending = new Set<Promise<unknown>>();
  /**
   * Permits granted here and not yet answered or released, oldest first: an
   * answer handed to observe without its permit (a hook wrapper that dropped
   * it) ends the oldest one's count, so it is not held for a whole lease.
   */
  readonly #outstanding = new Set<Permit>();
  /** Permits taken ahead and not yet used, with the timer that gives each back if no request comes for it. */
  readonly #spare = new Map<Permit, { timer: NodeJS.Timeout; takenAt: number }>();
  /** Milliseconds spent waiting by every acquire of this governor, for reports and benchmarks. */
  waitedMs = 0;

  constructor(options: RateGovernorOptions) {
    this.keys = budgetKeys(options.prefix, options.service, options.token);
    this.#o = {
      priority: "interactive",
      headroom: 0,
      leaseMs: 60_000,
      fallbackWindowMs: 60_000,
      pollMs: 20,
      jitterMs: 5,
      ...options,
    };
  }

  /** The budget's state key (a hash). */
  get key(): string {
    return this.keys.state;
  }

  /**
   * Runs a script by its SHA1, sending its text only when Redis does not have
   * it yet (a restart, a flushed cache, another cluster node): two scripts run
   * for every request, and their text is ~6 KB a request to write and parse.
   */
  async #eval(script: string, ...args: (string | number)[]): Promise<unknown> {
    const keys = keyList(this.keys);
    try {
      return await this.#o.redis.evalsha(scriptSha(script), 4, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error && err.message.startsWith("NOSCRIPT"))) throw err;
      return this.#o.redis.eval(script, 4, ...keys, ...args);
    }
  }

  /** ACQUIRE's arguments: what one pass of the acquire needs. */
  #acquireArgs(id: string, priority: Priority, tryOnly: boolean): (string | number)[] {
    return [
      id,
      priority,
      this.#o.leaseMs,
      this.#o.fallbackWindowMs,
      this.#o.headroom,
      this.#o.pollMs,
      WAITER_GRACE_MS,
      tryOnly ? 1 : 0,
    ];
  }

  /**
   * One pass of the acquire script: a permit now (wait ≤ 0) or how long to
   * wait. `tryOnly` (a permit taken ahead) never registers as a waiter.
   */
  async #tryAcquire(id: string, priority: Priority, tryOnly: boolean) {
    return AcquireReply.parse(await this.#eval(ACQUIRE_SCRIPT, ...this.#acquireArgs(id, priority, tryOnly)));
  }

  /** Resolves when one request may be sent, with the permit to hand back once it is answered or abandoned. */
  async acquire(options: AcquireOptions = {}): Promise<Permit> {
    const signal = options.signal ?? this.#o.signal;
    const priority = options.priority ?? this.#o.priority;
    const id = randomUUID();
    let waited = 0;
    try {
      for (;;) {
        signal?.throwIfAborted();
        const [wait, gen, grantedAt] = await this.#tryAcquire(id, priority, false);
        if (wait <= 0) {
          const permit = { id, gen, grantedAt, waitedMs: waited };
          this.#outstanding.add(permit);
          return permit;
        }
        const short = wait <= this.#o.pollMs;
        // Jitter only for waits on a reset, where every waiter would wake at once.
        const ms = short ? wait : wait + Math.round(Math.random() * this.#o.jitterMs);
        options.onWait?.(ms, new Date(Date.now() + ms));
        const started = performance.now();
        try {
          await (short ? this.#poll(ms, signal) : (this.#o.sleep ?? sleep)(ms, signal));
        } finally {
          const spent = performance.now() - started;
          waited += spent;
          this.waitedMs += spent;
        }
      }
    } catch (err) {
      // An abort (or an onWait that gave up) leaves nothing registered.
      await Promise.race([
        this.#eval(UNREGISTER_SCRIPT, id).catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, CLEANUP_TIMEOUT_MS).unref()),
      ]);
      throw err;
    }
  }

  /**
   * Observes an answer and, in the same round trip, takes one permit if the
   * budget has one now (no waiting, no registration): taken when an answer
   * comes, so the caller's next request finds its permit ready instead of
   * paying a Redis round trip on its path; given back if no request takes it
   * within SPARE_IDLE_MS.
   */
  async #observeAndTake(
    ctx: Pick<ResponseContext, "rateLimit" | "retryAfterMs"> & { receivedAt?: number | undefined },
    given: Permit | undefined,
    priority: Priority,
  ): Promise<Permit | undefined> {
    const { args, permit } = this.#observation(ctx, given);
    const id = randomUUID();
    const [, wait, gen, grantedAt] = ObserveAndTakeReply.parse(
      await this.#eval(OBSERVE_AND_TAKE_SCRIPT, ...args, ...this.#acquireArgs(id, priority, true)),
    );
    if (permit) this.#wakePollers();
    if (wait > 0) return undefined;
    const spare: Permit = { id, gen, grantedAt, waitedMs: 0 };
    this.#outstanding.add(spare);
    const timer = setTimeout(() => void this.release(spare).catch(() => undefined), SPARE_IDLE_MS);
    this.#spare.set(spare, { timer: timer.unref(), takenAt: Date.now() });
    return spare;
  }

  /**
   * Claims a permit taken ahead; undefined when it was given back meanwhile.
   * The claimed permit's grant time moves to now: the request goes out now,
   * and its answer is told apart from the last window's by when it was sent.
   */
  #claim(permit: Permit): Permit | undefined {
    const spare = this.#spare.get(permit);
    if (spare === undefined) return undefined;
    clearTimeout(spare.timer);
    this.#spare.delete(permit);
    this.#outstanding.delete(permit);
    const claimed = { ...permit, grantedAt: permit.grantedAt + (Date.now() - spare.takenAt) };
    this.#outstanding.add(claimed);
    return claimed;
  }

  /** A short wait that a settling request of this process ends early. */
  #poll(ms: number, signal: AbortSignal | undefined): Promise<void> {
    const ac = new AbortController();
    const wake = () => ac.abort();
    this.#pollers.add(wake);
    const both = signal ? AbortSignal.any([signal, ac.signal]) : ac.signal;
    return sleep(ms, both)
      .catch((err: unknown) => {
        if (signal?.aborted) throw err;
      })
      .finally(() => this.#pollers.delete(wake));
  }

  #wakePollers(): void {
    for (const wake of this.#pollers) wake();
  }

  /**
   * Feeds one response's headers (and Retry-After on a 429) into the shared
   * state, and ends the in-flight count of the request it answers.
   */
  async observe(
    ctx: Pick<ResponseContext, "rateLimit" | "retryAfterMs"> & { receivedAt?: number | undefined },
    given?: Permit,
  ): Promise<void> {
    if (!ctx.rateLimit && ctx.retryAfterMs === undefined && !given && this.#oldestSent() === undefined)
      return;
    const { args, permit } = this.#observation(ctx, given);
    await this.#eval(OBSERVE_SCRIPT, ...args);
    if (permit) this.#wakePollers();
  }

  /** The oldest permit granted here that a request is using (not one taken ahead and unclaimed). */
  #oldestSent(): Permit | undefined {
    return [...this.#outstanding].find((p) => !this.#spare.has(p));
  }

  /** OBSERVE's arguments for one answer, and the permit whose count it ends (now counted as answered). */
  #observation(
    ctx: Pick<ResponseContext, "rateLimit" | "retryAfterMs"> & { receivedAt?: number | undefined },
    given: Permit | undefined,
  ): { args: (string | number)[]; permit: Permit | undefined } {
    const rl = ctx.rateLimit;
    const permit = given ?? this.#oldestSent();
    if (permit) {
      this.#answered.add(permit);
      this.#outstanding.delete(permit);
    }
    const now = Date.now();
    const args = [
      permit?.id ?? "",
      permit?.gen ?? -1,
      permit?.grantedAt ?? -1,
      rl?.limit ?? -1,
      rl?.remaining ?? -1,
      rl ? rl.resetAt - now : 0,
      rl?.resetPrecisionMs ?? 1000,
      rl?.resetUnit === "delta-seconds" ? 1 : 0,
      Math.max(0, now - (ctx.receivedAt ?? now)),
      ctx.retryAfterMs ?? -1,
      this.#o.fallbackWindowMs,
    ];
    return { args, permit };
  }

  /** Ends the in-flight count of a request that got no answer (network fault, timeout, abort). */
  async release(permit: Permit): Promise<void> {
    if (this.#answered.has(permit)) return;
    this.#answered.add(permit);
    this.#outstanding.delete(permit);
    const spare = this.#spare.get(permit);
    if (spare !== undefined) {
      clearTimeout(spare.timer);
      this.#spare.delete(permit);
    }
    await this.#eval(RELEASE_SCRIPT, permit.id);
    this.#wakePollers();
  }

  /**
   * Resolves when every observation the client hooks sent has reached Redis
   * and every permit taken ahead is given back (before shutdown, or to read
   * state()).
   */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending);
    await Promise.all([...this.#spare.keys()].map((p) => this.release(p)));
  }

  /** The budget as Redis holds it now (for tests and the ops API). */
  async state(): Promise<GovernorState> {
    const before = Date.now();
    const reply = await this.#eval(STATE_SCRIPT);
    const after = Date.now();
    const [redisNow, limit, rep, lo, hi, slack, inFlight, interactive, background] = StateReply.parse(reply);
    // Times go out in this process's clock: what matters is how far away they
    // are; Redis's now is taken as the middle of the round trip.
    const local = (t: number | undefined) =>
      t === undefined ? undefined : Math.round((before + after) / 2 + (t - redisNow));
    const resetAt = local(hi === undefined ? undefined : hi + (slack ?? 0));
    const spent = rep !== undefined && rep - inFlight - this.#o.headroom < 1;
    return {
      limit: limit === undefined || limit < 0 ? undefined : limit,
      remaining: rep,
      resetAt,
      resetEarliest: local(lo),
      inFlight,
      waiting: { interactive, background },
      pausedUntil: spent && resetAt !== undefined && resetAt > Date.now() ? resetAt : undefined,
    };
  }

  /**
   * The client hooks, ready to spread into createClient's options. Every
   * request of that client acquires with `priority`; `onWait` hears of each
   * wait, so a job can total and report its own.
   */
  clientHooks(hookOptions: Priority | Omit<AcquireOptions, "signal"> = {}): ClientHooks {
    const options = typeof hookOptions === "string" ? { priority: hookOptions } : hookOptions;
    const priority = options.priority ?? this.#o.priority;
    const ahead: Promise<Permit | undefined>[] = [];
    return {
      beforeRequest: async (_operationId, signal) => {
        while (ahead.length > 0) {
          const spare = await ahead.shift();
          const permit = spare && this.#claim(spare);
          if (permit) return permit;
        }
        return this.acquire({ ...options, signal });
      },
      // Not awaited: Redis runs one connection's commands in order, so this
      // process's next acquire sees the observation all the same, and the
      // request path saves a round trip. settled() waits for it. The permit
      // of the next request is taken in the same round trip as the observation.
      onResponse: (ctx) => {
        const given = isPermit(ctx.permit) ? ctx.permit : undefined;
        if (ahead.length >= MAX_AHEAD) {
          const p = this.observe(ctx, given)
            .catch(() => undefined)
            .finally(() => this.#pending.delete(p));
          this.#pending.add(p);
          return;
        }
        const taking = this.#observeAndTake(ctx, given, priority).catch(() => undefined);
        ahead.push(taking);
        const done: Promise<unknown> = taking.then(() => this.#pending.delete(done));
        this.#pending.add(done);
      },
      // Observe already ended the count when an answer came; this covers attempts that got none.
      afterRequest: async (permit) => {
        if (isPermit(permit)) await this.release(permit).catch(() => undefined);
      },
    };
  }
}

const shas = new Map<string, string>();

/** The SHA1 Redis names a script by. */
function scriptSha(script: string): string {
  let sha = shas.get(script);
  if (sha === undefined) {
    sha = createHash("sha1").update(script).digest("hex");
    shas.set(script, sha);
  }
  return sha;
}

function isPermit(v: unknown): v is Permit {
  return typeof v === "object" && v !== null && "id" in v && "grantedAt" in v && "gen" in v;
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

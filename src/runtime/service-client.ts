import type { Logger } from "pino";
import { type ApiClient, createClient } from "../api/index.ts";
import type { RuntimeConfig } from "../config/index.ts";
import { ConfigError } from "../errors/index.ts";
import {
  createRateGovernor,
  type GovernorState,
  type OnWait,
  type Priority,
  type RateGovernor,
  WaitUnion,
} from "../governor/index.ts";
import { BudgetPausedError } from "./budget-paused-error.ts";
import { type FleetCounting, fleetCounting } from "./fleet-counters.ts";
import { asRedis, connectRedis, type RedisConnection } from "./redis-connection.ts";
import { checkServiceBaseUrl, serviceAddressCheck } from "./service-address.ts";

/** What one run spent waiting on the shared budget. */
export interface BudgetUse {
  /** Wall-clock time during which at least one request waited: never more than the run's own duration. */
  readonly waitedMs: number;
  /** Waits counted (each request's own). */
  readonly waits: number;
}

export interface ServiceClient {
  client: ApiClient;
  governor: RateGovernor | undefined;
  budget: BudgetUse;
  /** Adds what this client counted to the fleet's counters and frees the Redis connection it opened. */
  close(): Promise<void>;
}

export interface ServiceClientOptions {
  /** Share the rate budget through Redis with every other worker using the token (default true). */
  shareBudget?: boolean;
  /** A connection to reuse for the governor; it is left open on close. */
  redis?: RedisConnection;
  logger?: Logger;
  /**
   * Requests kept back from the budget beyond those in flight (the governor
   * counts those itself), for clients outside it that share the token.
   */
  headroom?: number;
  /** `interactive` (default): a person waits for it, so it goes before `background` work such as schedules. */
  priority?: Priority;
  /** Hears of every wait on the shared budget (how long, until when): the CLI's progress shows it. */
  onBudgetWait?: OnWait;
  /**
   * A wait on the budget longer than this ends the request with a
   * BudgetPausedError instead: a queued job gives back its slot and resumes
   * at the reset. Unbounded when not given.
   */
  pauseBeyondMs?: number;
  /** Add the answers and budget waits to the fleet's counters in Redis (the workers do, for /metrics). */
  countForFleet?: boolean;
}

/** The one place a governor is made: the token and service key the budget, under the configured prefix. */
function governorFor(config: RuntimeConfig, redis: RedisConnection, token: string, headroom?: number) {
  return createRateGovernor({
    redis: asRedis(redis),
    token,
    service: config.service.baseUrl,
    prefix: config.redis.prefix,
    ...(headroom === undefined ? {} : { headroom }),
  });
}

/** The token, or one line on where to set it. */
function requireToken(config: RuntimeConfig): string {
  const token = config.service.token;
  if (token) return token;
  throw new ConfigError("no API token: set RECRUIT_SYNC_API_TOKEN (the emulator prints one when it starts)");
}

/** A ConfigError when no request could succeed: no token, or a base URL that cannot lead to the service. */
export function checkServiceSettings(config: RuntimeConfig): void {
  requireToken(config);
  checkServiceBaseUrl(config.service.baseUrl);
}

/**
 * The client as every run builds it, whichever way it came in: base URL,
 * token and retries from the configuration, the address checked, and the
 * Redis-shared rate governor in front of every call. A long budget wait
 * becomes a pause through the governor's own wait hook, so no request pays
 * a Redis round trip beyond the governor's.
 */
export async function createServiceClient(
  config: RuntimeConfig,
  options: ServiceClientOptions = {},
): Promise<ServiceClient> {
  checkServiceSettings(config);
  const token = requireToken(config);
  let owned: RedisConnection | undefined;
  let governor: RateGovernor | undefined;
  let counting: FleetCounting | undefined;
  if (options.shareBudget !== false) {
    const redis = options.redis ?? (await connectRedis(config, "needed to share the rate budget"));
    if (!options.redis) owned = redis;
    governor = governorFor(config, redis, token, options.headroom);
    if (options.countForFleet) counting = fleetCounting(asRedis(redis), config.redis.prefix);
  }
  // Requests in flight wait together: the run waited while any of them did, not the sum of their waits.
  const waited = new WaitUnion();
  let waits = 0;
  const budget: BudgetUse = {
    get waitedMs() {
      return Math.round(waited.ms);
    },
    get waits() {
      return waits;
    },
  };
  const bound = options.pauseBeyondMs;
  const onWait: OnWait = (ms, until) => {
    if (bound !== undefined && ms > bound) throw new BudgetPausedError(until.getTime());
    options.onBudgetWait?.(ms, until);
  };
  const hooks = governor?.clientHooks({
    ...(options.priority ? { priority: options.priority } : {}),
    onWait,
  });
  const beforeRequest: NonNullable<typeof hooks>["beforeRequest"] | undefined =
    hooks &&
    (async (operationId, signal) => {
      const t0 = performance.now();
      const wait = waited.begin(t0);
      let ms = 0;
      try {
        return await hooks.beforeRequest(operationId, signal);
      } finally {
        ms = performance.now() - t0;
        // A few milliseconds are the governor's round trip, not a wait on the budget.
        waited.end(wait, t0 + ms, ms > 5);
        if (ms > 5) {
          waits++;
          counting?.budgetWait(ms);
        }
      }
    });
  const client = createClient({
    baseUrl: config.service.baseUrl,
    token,
    timeoutMs: config.service.timeoutMs,
    retry: config.service.retry,
    resetUnit: config.service.resetUnit,
    ...(options.logger ? { logger: options.logger } : {}),
    // afterRequest ends the in-flight count of an attempt that got no answer; without it the count waits out its lease.
    ...(hooks && beforeRequest ? { beforeRequest, afterRequest: hooks.afterRequest } : {}),
    onResponse: serviceAddressCheck(config.service.baseUrl, (ctx) => {
      counting?.response(ctx.operationId, ctx.status);
      return hooks?.onResponse(ctx);
    }),
  });
  return {
    client,
    governor,
    budget,
    async close() {
      await counting?.flush();
      owned?.disconnect();
    },
  };
}

/** The shared budget of the configured token as the fleet sees it now; undefined without a token. */
export async function readBudget(
  config: RuntimeConfig,
  redis: RedisConnection,
): Promise<GovernorState | undefined> {
  const token = config.service.token;
  if (!token) return undefined;
  return governorFor(config, redis, token).state();
}

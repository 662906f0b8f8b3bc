import type { Logger } from "pino";
import { type ApiClient, createClient } from "../api/index.ts";
import type { RuntimeConfig } from "../config/index.ts";
import { ConfigError } from "../errors/index.ts";
import { createRateGovernor, type OnWait, type RateGovernor } from "../governor/index.ts";
import { asRedis, connectRedis, type RedisConnection } from "./redis-connection.ts";
import { checkServiceBaseUrl, serviceAddressCheck } from "./service-address.ts";

export interface ServiceClient {
  client: ApiClient;
  governor: RateGovernor | undefined;
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
  /** Hears of every wait on the shared budget (how long, until when): the CLI's progress shows it. */
  onBudgetWait?: OnWait;
}

/**
 * The client as every command and worker builds it: base URL, token and
 * retries from the configuration, and the Redis-shared rate governor in front
 * of every call.
 */
export async function createServiceClient(
  config: RuntimeConfig,
  options: ServiceClientOptions = {},
): Promise<ServiceClient> {
  const token = config.service.token;
  if (!token) {
    throw new ConfigError(
      "no API token: set RECRUIT_SYNC_API_TOKEN (the emulator prints one when it starts)",
    );
  }
  checkServiceBaseUrl(config.service.baseUrl);
  let owned: RedisConnection | undefined;
  let governor: RateGovernor | undefined;
  if (options.shareBudget !== false) {
    const redis = options.redis ?? (await connectRedis(config, "needed to share the rate budget"));
    if (!options.redis) owned = redis;
    governor = createRateGovernor({
      redis: asRedis(redis),
      token,
      service: config.service.baseUrl,
      prefix: config.redis.prefix,
      ...(options.headroom === undefined ? {} : { headroom: options.headroom }),
    });
  }
  const hooks = governor?.clientHooks(options.onBudgetWait ? { onWait: options.onBudgetWait } : {});
  const client = createClient({
    baseUrl: config.service.baseUrl,
    token,
    timeoutMs: config.service.timeoutMs,
    retry: config.service.retry,
    resetUnit: config.service.resetUnit,
    ...(options.logger ? { logger: options.logger } : {}),
    // afterRequest ends the in-flight count of an attempt that got no answer; without it the count waits out its lease.
    ...(hooks ? { beforeRequest: hooks.beforeRequest, afterRequest: hooks.afterRequest } : {}),
    onResponse: serviceAddressCheck(config.service.baseUrl, hooks?.onResponse),
  });
  return {
    client,
    governor,
    async close() {
      owned?.disconnect();
    },
  };
}

import { Redis } from "ioredis";
import type { Logger } from "pino";
import { type ApiClient, createClient } from "../api/index.ts";
import type { RuntimeConfig } from "../config/index.ts";
import { ConfigError } from "../errors/index.ts";
import { createRateGovernor, type RateGovernor } from "../governor/index.ts";

export interface ServiceClient {
  client: ApiClient;
  governor: RateGovernor | undefined;
  close(): Promise<void>;
}

export interface ServiceClientOptions {
  /** Share the rate budget through Redis with every other worker using the token (default true). */
  shareBudget?: boolean;
  logger?: Logger;
}

/**
 * A connection to the configured Redis, or a ConfigError saying what to start.
 * `purpose` ends the message: why this command needs Redis.
 */
export async function connectRedis(config: RuntimeConfig, purpose: string): Promise<Redis> {
  const redis = new Redis(config.redis.url, {
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: false,
  });
  try {
    await redis.connect();
    return redis;
  } catch (err) {
    redis.disconnect();
    throw new ConfigError(
      `Redis does not answer at ${config.redis.url} (${purpose}): start redis-server or set REDIS_URL`,
      [],
      { cause: err },
    );
  }
}

/**
 * The client as every command builds it: base URL, token and retries from the
 * configuration, and the Redis-shared rate governor in front of every call.
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
  let redis: Redis | undefined;
  let governor: RateGovernor | undefined;
  if (options.shareBudget !== false) {
    redis = await connectRedis(config, "needed to share the rate budget");
    governor = createRateGovernor({ redis, token, prefix: config.redis.prefix, headroom: 2 });
  }
  const client = createClient({
    baseUrl: config.service.baseUrl,
    token,
    timeoutMs: config.service.timeoutMs,
    retry: config.service.retry,
    resetUnit: config.service.resetUnit,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(governor ? governor.clientHooks() : {}),
  });
  return {
    client,
    governor,
    async close() {
      redis?.disconnect();
    },
  };
}

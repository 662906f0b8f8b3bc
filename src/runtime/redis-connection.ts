import { Redis, type RedisOptions } from "ioredis";
import type { RuntimeConfig } from "../config/index.ts";
import { ConfigError } from "../errors/index.ts";

export interface ConnectRedisOptions {
  /**
   * BullMQ's blocking connections must wait out a Redis restart rather than
   * fail a command (it refuses an ioredis with any other value).
   */
  forQueue?: boolean;
}

/**
 * How every connection of ours talks to Redis. A restart of Redis must not end
 * a run: commands wait in the offline queue while ioredis reconnects (every
 * 0.2–2 s), and give up after about a minute rather than hang a job forever.
 */
export function redisOptions(options: ConnectRedisOptions = {}): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: true,
    maxRetriesPerRequest: options.forQueue ? null : 40,
    retryStrategy: (times) => Math.min(200 * times, 2000),
    // Redis may be a Cluster or a managed service that renames INFO: BullMQ checks the version itself.
    enableReadyCheck: true,
  };
}

/**
 * A connection to the configured Redis, or a ConfigError saying what to start.
 * `purpose` ends the message: why this command needs Redis. Once connected,
 * errors are kept from ioredis's "Unhandled error event" print: each command
 * that fails says so to its caller.
 */
export async function connectRedis(
  config: RuntimeConfig,
  purpose: string,
  options: ConnectRedisOptions = {},
): Promise<Redis> {
  const redis = new Redis(config.redis.url, { ...redisOptions(options), retryStrategy: () => null });
  redis.on("error", () => {});
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new ConfigError(
      `Redis does not answer at ${safeRedisUrl(config.redis.url)} (${purpose}): start redis-server or set REDIS_URL`,
      [],
      { cause: err },
    );
  }
  // Answered once: from now on ride out restarts instead of failing at the first hiccup.
  redis.options.retryStrategy = redisOptions(options).retryStrategy;
  return redis;
}

/** The URL without its password, for messages. */
export function safeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(an unparseable REDIS_URL)";
  }
}

import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis";
import type { RuntimeConfig } from "../config/index.ts";
import { ConfigError, noteRedisAddress, noteRedisGaveUp } from "../errors/index.ts";

/**
 * A connection to a single Redis or to a Redis Cluster. Both speak the
 * commands we use (GET/SET/HGET…, EVAL, MULTI on one key); on a Cluster every
 * script and transaction must keep its keys in one hash slot, which a
 * hash-tagged prefix (`{recruit-sync}`) guarantees for all of ours.
 */
export type RedisConnection = Redis | Cluster;

/**
 * For the two callees still typed on a single-node `Redis`: the rate governor
 * (src/governor) and runImport's ledger option (src/imports/run-import.ts).
 * Both only run EVAL, HGET/HGETALL/HSET, DEL and one-key MULTI, which a
 * Cluster serves the same way on our one-slot keys, so handing them a Cluster
 * is sound; their owners are widening the types, after which this goes.
 */
export function asRedis(connection: RedisConnection): Redis {
  return connection as Redis;
}

export interface ConnectRedisOptions {
  /**
   * BullMQ's blocking connections must wait out a Redis restart rather than
   * fail a command (it refuses an ioredis with any other value).
   */
  forQueue?: boolean;
  /**
   * How long Redis may not answer before the connection stops trying: every
   * command waiting fails, and so does every later one (config
   * `redis.giveUpAfterMs`, default 60 s). Not for `forQueue` connections,
   * which wait without end; their process follows the other connection's
   * give-up (REDIS_GAVE_UP). `null`: never give up (the ops server, which
   * must answer again once Redis is back); its commands then fail after about
   * 70 s of an outage, as they always did.
   */
  giveUpAfterMs?: number | null;
}

/** Default of `redis.giveUpAfterMs`. */
export const GIVE_UP_AFTER_MS = 60_000;

/** Emitted by a connection once it has stopped trying (it then ends): a worker stops on it. */
export const REDIS_GAVE_UP = "recruit-sync:gave-up";

/** `redis+cluster://` or `rediss+cluster://` followed by comma-separated seed nodes. */
const CLUSTER_URL = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?#]+)\/?$/;

/** Where a cluster URL points: the seed nodes (the client learns the rest) and the credentials. */
export interface ClusterTarget {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

/** True for the `redis+cluster://host:port,host:port` form of redis.url. */
export function isClusterUrl(url: string): boolean {
  return /^rediss?\+cluster:\/\//.test(url);
}

/**
 * Reads `redis+cluster://[user:password@]host:port,host:port` (or
 * `rediss+cluster://` for TLS). A node without a port is on 6379. A URL that
 * does not fit is a ConfigError naming the part that is wrong — without the
 * password.
 */
export function parseClusterUrl(url: string): ClusterTarget {
  const m = CLUSTER_URL.exec(url);
  if (!m) {
    throw new ConfigError(
      `redis.url ${safeRedisUrl(url)}: a cluster URL is redis+cluster://host:port,host:port (no database, no query)`,
    );
  }
  const [, scheme, auth, hosts = ""] = m;
  const nodes = hosts.split(",").map((hostPort) => {
    const hp = /^([^:,\s]+|\[[0-9a-fA-F:.]+\])(?::(\d{1,5}))?$/.exec(hostPort.trim());
    const port = Number(hp?.[2] ?? 6379);
    if (!hp?.[1] || port < 1 || port > 65535) {
      throw new ConfigError(`redis.url: "${hostPort}" is not host:port (in ${safeRedisUrl(url)})`);
    }
    return { host: hp[1].replace(/^\[|\]$/g, ""), port };
  });
  const target: ClusterTarget = { nodes, tls: scheme === "rediss" };
  if (auth) {
    const colon = auth.indexOf(":");
    const user = decodeURIComponent(colon < 0 ? auth : auth.slice(0, colon));
    const password = colon < 0 ? "" : decodeURIComponent(auth.slice(colon + 1));
    if (user) target.username = user;
    if (password) target.password = password;
  }
  return target;
}

/**
 * How every connection of ours talks to Redis. A restart of Redis must not end
 * a run: commands wait in the offline queue while ioredis reconnects (every
 * 0.2–2 s), until the connection gives up (giveUpAfterMs) rather than hang a
 * job forever.
 */
export function redisOptions(options: ConnectRedisOptions = {}): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: true,
    maxRetriesPerRequest: options.forQueue
      ? null
      : retriesWithin(options.giveUpAfterMs === undefined ? GIVE_UP_AFTER_MS : options.giveUpAfterMs),
    retryStrategy: reconnectDelay,
    // Redis may be a Cluster or a managed service that renames INFO: BullMQ checks the version itself.
    enableReadyCheck: true,
  };
}

function reconnectDelay(times: number): number {
  return Math.min(200 * times, 2000);
}

/**
 * ioredis fails the commands waiting after this many reconnections: more than
 * fit in `ms`, so that the give-up, not the count, decides when a command fails.
 */
function retriesWithin(ms: number | null): number {
  if (ms === null) return 40;
  let spent = 0;
  let times = 0;
  while (spent < ms) spent += reconnectDelay(++times);
  return Math.max(40, times + 5);
}

/**
 * Reconnects as reconnectDelay says until Redis has not answered for
 * `giveUpAfterMs` since the connection was lost; then stops (ioredis fails the
 * waiting commands and ends the connection), says so for the messages
 * (outside-failures.ts), and emits REDIS_GAVE_UP.
 */
function rideOutOutages(redis: RedisConnection, giveUpAfterMs: number): (times: number) => number | null {
  let downSince: number | undefined;
  redis.on("ready", () => {
    downSince = undefined;
  });
  return (times) => {
    downSince ??= Date.now();
    const left = giveUpAfterMs - (Date.now() - downSince);
    if (left <= 0) {
      noteRedisGaveUp(giveUpAfterMs);
      // After ioredis has ended the connection, so that a listener finds every command failing.
      setImmediate(() => redis.emit(REDIS_GAVE_UP));
      return null;
    }
    return Math.max(1, Math.min(reconnectDelay(times), left));
  };
}

/**
 * The same policy for a Cluster: the cluster client reconnects as a whole
 * (clusterRetryStrategy), and the per-command limit lives in redisOptions,
 * where BullMQ looks for `maxRetriesPerRequest: null`.
 */
export function clusterOptions(target: ClusterTarget, options: ConnectRedisOptions = {}): ClusterOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: true,
    enableReadyCheck: true,
    clusterRetryStrategy: reconnectDelay,
    redisOptions: {
      maxRetriesPerRequest: options.forQueue
        ? null
        : retriesWithin(options.giveUpAfterMs === undefined ? GIVE_UP_AFTER_MS : options.giveUpAfterMs),
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
      ...(target.tls ? { tls: {} } : {}),
    },
  };
}

/**
 * A client for `url`, not yet connected unless `lazyConnect: false`: a Redis
 * for redis:// and rediss://, a Cluster for redis+cluster:// and
 * rediss+cluster://.
 */
export function createRedisConnection(
  url: string,
  options: ConnectRedisOptions & { lazyConnect?: boolean } = {},
): RedisConnection {
  const lazyConnect = options.lazyConnect ?? true;
  noteRedisAddress(safeRedisUrl(url));
  if (isClusterUrl(url)) {
    const target = parseClusterUrl(url);
    return new Cluster(target.nodes, { ...clusterOptions(target, options), lazyConnect });
  }
  return new Redis(url, { ...redisOptions(options), lazyConnect });
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
): Promise<RedisConnection> {
  const giveUpAfterMs =
    options.giveUpAfterMs === undefined
      ? (config.redis.giveUpAfterMs ?? GIVE_UP_AFTER_MS)
      : options.giveUpAfterMs;
  const redis = createRedisConnection(config.redis.url, { ...options, giveUpAfterMs });
  // Fail at once when nobody answers at start; the policy that rides out restarts comes after.
  if (redis instanceof Cluster) redis.options.clusterRetryStrategy = () => null;
  else redis.options.retryStrategy = () => null;
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
  // Answered once: from now on ride out restarts instead of failing at the first hiccup, up to the give-up.
  const strategy =
    options.forQueue || giveUpAfterMs === null ? reconnectDelay : rideOutOutages(redis, giveUpAfterMs);
  if (redis instanceof Cluster) redis.options.clusterRetryStrategy = strategy;
  else redis.options.retryStrategy = strategy;
  return redis;
}

/** The URL without its password, for messages. */
export function safeRedisUrl(url: string): string {
  if (isClusterUrl(url)) return url.replace(/(\/\/[^:@/]*:)[^@/]*@/, "$1***@");
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(an unparseable REDIS_URL)";
  }
}

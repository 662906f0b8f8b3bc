import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import { ConfigError } from "../../errors/index.ts";

/** Where the demo looks for a Redis when REDIS_URL does not answer (or is not set). */
export const DEFAULT_DEMO_REDIS = "redis://127.0.0.1:6379";

export interface DemoRedis {
  url: string;
  /** How it was found, for the demo's first lines. */
  source: "REDIS_URL" | "default" | "started";
  /** A REDIS_URL that was set but did not answer, so the user knows it was passed over. */
  passedOver: string | undefined;
  stop(): Promise<void>;
}

/** Whether a Redis at `url` answers PING, without retrying or queueing. */
export async function redisAnswers(url: string): Promise<boolean> {
  const r = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 2000,
  });
  r.on("error", () => {});
  try {
    await r.connect();
    return (await r.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Without a password or a path in it: what the demo prints. */
function shown(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@");
}

/** The process id INFO gives for the Redis answering on `port`, or undefined when none answers. */
async function redisProcessId(port: number): Promise<number | undefined> {
  const r = new Redis({
    port,
    host: "127.0.0.1",
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  r.on("error", () => {});
  try {
    await r.connect();
    const pid = /^process_id:(\d+)/m.exec(await r.info("server"))?.[1];
    return pid === undefined ? undefined : Number(pid);
  } catch {
    return undefined;
  } finally {
    r.disconnect();
  }
}

/**
 * Resolves true once the redis-server answering on `port` is `child`; false
 * when the child could not start or exits first, or `timeoutMs` passes. A
 * port found free may be taken by another server before the child binds it:
 * the child then exits, and a PING alone would be answered by the other one.
 */
export async function answersAs(port: number, child: ChildProcess, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    // No pid: the binary could not be spawned at all (ENOENT arrives as an event).
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return false;
    if ((await redisProcessId(port)) === child.pid) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** Ports tried for the demo's own redis-server before giving up. */
const THROWAWAY_ATTEMPTS = 3;

/**
 * A throwaway redis-server from PATH on a free loopback port that keeps
 * nothing on disk; undefined when there is no redis-server to start.
 */
async function startThrowawayRedis(): Promise<{ url: string; stop(): Promise<void> } | undefined> {
  for (let attempt = 0; attempt < THROWAWAY_ATTEMPTS; attempt++) {
    const port = await freePort();
    const child: ChildProcess = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: "ignore" },
    );
    child.once("error", () => {});
    if (await answersAs(port, child, 5000)) {
      return {
        url: `redis://127.0.0.1:${port}`,
        stop: () =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGTERM");
          }),
      };
    }
    if (child.pid === undefined) return undefined;
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  return undefined;
}

export interface EnsureRedisOptions {
  /** REDIS_URL, when set. */
  envUrl?: string | undefined;
  /** Tried after REDIS_URL; default DEFAULT_DEMO_REDIS (tests point it elsewhere). */
  defaultUrl?: string;
  /** Skip the candidates and start a throwaway redis-server (tests of that path). */
  forceThrowaway?: boolean;
}

/**
 * The Redis the demo runs on: REDIS_URL when it answers, else the default
 * 127.0.0.1:6379 when it answers, else a throwaway redis-server from PATH
 * (stopped by `stop()`). When none of these is possible, a ConfigError that
 * says how to get one: the queues, the rate budget and the ledger live there.
 */
export async function ensureRedis(options: EnsureRedisOptions = {}): Promise<DemoRedis> {
  const envUrl = options.envUrl || undefined;
  const defaultUrl = options.defaultUrl ?? DEFAULT_DEMO_REDIS;
  let passedOver: string | undefined;
  if (!options.forceThrowaway) {
    if (envUrl) {
      if (await redisAnswers(envUrl)) {
        return { url: envUrl, source: "REDIS_URL", passedOver, stop: async () => {} };
      }
      passedOver = shown(envUrl);
    }
    if (envUrl !== defaultUrl && (await redisAnswers(defaultUrl))) {
      return { url: defaultUrl, source: "default", passedOver, stop: async () => {} };
    }
  }
  const started = await startThrowawayRedis();
  if (started) return { ...started, source: "started", passedOver };
  throw new ConfigError(
    `no Redis for the demo: ${passedOver ? `REDIS_URL (${passedOver}) does not answer, ` : ""}nothing answers at ${shown(defaultUrl)} and redis-server is not on PATH; install Redis (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL to one that runs`,
  );
}

import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";

export interface DemoRedis {
  url: string;
  /** Whether the demo started this Redis itself (and so stops it). */
  started: boolean;
  stop(): Promise<void>;
}

/** Whether a Redis at `url` answers PING, without retrying or queueing. */
export async function redisAnswers(url: string): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
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

function freePort(): Promise<number> {
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

/**
 * The configured Redis when it answers; otherwise a throwaway redis-server
 * from PATH on a free loopback port, keeping nothing on disk. Undefined when
 * neither is possible: the demo then runs without the shared budget and ledger.
 */
export async function ensureRedis(configuredUrl: string): Promise<DemoRedis | undefined> {
  if (await redisAnswers(configuredUrl)) return { url: configuredUrl, started: false, stop: async () => {} };
  const port = await freePort();
  let child: ChildProcess;
  try {
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      {
        stdio: "ignore",
      },
    );
  } catch {
    return undefined;
  }
  const failed = new Promise<boolean>((resolve) => child.once("error", () => resolve(true)));
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    if (await Promise.race([failed, new Promise<false>((r) => setTimeout(() => r(false), 100))]))
      return undefined;
    if (await redisAnswers(url)) {
      return {
        url,
        started: true,
        stop: () =>
          new Promise<void>((resolve) => {
            child.once("exit", () => resolve());
            child.kill("SIGTERM");
          }),
      };
    }
  }
  child.kill("SIGKILL");
  return undefined;
}

import { createHash } from "node:crypto";
import { once } from "node:events";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { ACQUIRE_SCRIPT, OBSERVE_SCRIPT } from "../../src/governor/governor-script.ts";
import { createRateGovernor } from "../../src/governor/index.ts";
import { NOTHING_ON_DISK, spawnOwnRedis } from "../helpers/redis-process.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A Redis server of this test's own: its script cache starts empty and can be flushed without touching anyone else's. */
async function privateRedis(): Promise<Redis> {
  const { port, child } = await spawnOwnRedis(NOTHING_ON_DISK);
  cleanups.push(async () => {
    if (child.exitCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  });
  const redis = new Redis({ port, host: "127.0.0.1" });
  cleanups.push(async () => {
    redis.disconnect();
  });
  return redis;
}

describe("the governor's scripts run by SHA1", () => {
  it("works on a Redis that has never seen its scripts, and again after they are flushed", async () => {
    const redis = await privateRedis();
    const g = createRateGovernor({ redis, token: "t", service: "http://svc", prefix: "script-cache-test" });
    const answer = (remaining: number) => ({
      rateLimit: {
        limit: 5,
        remaining,
        resetAt: Date.now() + 60_000,
        resetUnit: "delta-seconds" as const,
        resetPrecisionMs: 1000,
      },
      retryAfterMs: undefined,
    });
    // A fresh server: every script's first run meets NOSCRIPT and sends its text.
    await g.observe(answer(4));
    await g.observe(answer(3), await g.acquire());
    expect(await g.state()).toMatchObject({ limit: 5, remaining: 3, inFlight: 0 });
    const cached = (await redis.call("SCRIPT", "EXISTS", ...scriptShas())) as number[];
    expect(cached.length).toBeGreaterThan(0);
    expect(cached.every((c) => c === 1)).toBe(true);

    // A restarted or flushed Redis loses them: the governor sends them again.
    await redis.script("FLUSH");
    const permit = await g.acquire();
    expect(await g.state()).toMatchObject({ remaining: 3, inFlight: 1 });
    await g.observe(answer(2), permit);
    expect(await g.state()).toMatchObject({ remaining: 2, inFlight: 0 });
  });
});

/** The SHA1s Redis names the acquire and observe scripts by. */
function scriptShas(): string[] {
  return [ACQUIRE_SCRIPT, OBSERVE_SCRIPT].map((s) => createHash("sha1").update(s).digest("hex"));
}

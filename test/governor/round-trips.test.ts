import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import { createRateGovernor } from "../../src/governor/index.ts";
import { cleanupsPerTest } from "../helpers/redis.ts";
import { startFixedWindowService } from "./fixed-window-service.ts";

const { cleanups, redisFor } = cleanupsPerTest();

/** The real connection, with every script run the governor sends to it counted. */
function counting(redis: Redis): { redis: Pick<Redis, "eval" | "evalsha">; scripts: () => number } {
  let n = 0;
  return {
    redis: {
      eval: ((...args: Parameters<Redis["eval"]>) => {
        n++;
        return redis.eval(...args);
      }) as Redis["eval"],
      evalsha: ((...args: Parameters<Redis["evalsha"]>) => {
        n++;
        return redis.evalsha(...args);
      }) as Redis["evalsha"],
    },
    scripts: () => n,
  };
}

describe("Redis round trips per request", () => {
  it("one per request: the answer is observed and the next request's permit taken in the same script run", async () => {
    const service = await startFixedWindowService({ limit: 1000, windowMs: 60_000 });
    cleanups.push(service.close);
    const { redis, prefix } = await redisFor();
    // A fresh Redis script cache would add NOSCRIPT retries: warm it with one governor first.
    const warm = createRateGovernor({
      redis,
      token: "t",
      service: service.server.baseUrl,
      prefix: `${prefix}-w`,
    });
    const warmClient = createClient({ baseUrl: service.server.baseUrl, token: "t", ...warm.clientHooks() });
    await warmClient.searchSegments();
    await warmClient.searchSegments();
    await warm.settled();

    const counted = counting(redis);
    const g = createRateGovernor({
      redis: counted.redis,
      token: "t",
      service: service.server.baseUrl,
      prefix,
    });
    const client = createClient({
      baseUrl: service.server.baseUrl,
      token: "t",
      retry: { maxAttempts: 1 },
      ...g.clientHooks(),
    });
    const REQUESTS = 30;
    for (let i = 0; i < REQUESTS; i++) await client.searchSegments();
    await g.settled();

    expect(service.statuses.filter((s) => s === 200)).toHaveLength(REQUESTS + 2);
    // The first request acquires; each answer is one script run that also takes the next permit;
    // the permit taken after the last answer goes back at the end.
    expect(counted.scripts()).toBeLessThanOrEqual(REQUESTS + 2);
    expect(await g.state()).toMatchObject({ inFlight: 0, remaining: 1000 - REQUESTS - 2 });
  });
});

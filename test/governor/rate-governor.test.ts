import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import { createRateGovernor } from "../../src/governor/index.ts";
import { sendJson, sendText, startTestServer, type TestServer } from "../helpers/http-server.ts";
import { cleanupsPerTest, withTestRedis } from "../helpers/redis.ts";

const { cleanups, redisFor } = cleanupsPerTest();

/** A service with a fixed window of `limit` requests per `windowMs`, answering 429 past it. */
async function limitedService(limit: number, windowMs: number) {
  let windowStart = Date.now();
  let used = 0;
  const statuses: number[] = [];
  const server: TestServer = await startTestServer((_req, res) => {
    const now = Date.now();
    if (now - windowStart >= windowMs) {
      windowStart = now;
      used = 0;
    }
    const resetIn = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
    const headers = {
      "x-ratelimit-limit": String(limit),
      "x-ratelimit-remaining": String(Math.max(0, limit - used - 1)),
      "x-ratelimit-reset": String(resetIn),
    };
    if (used >= limit) {
      statuses.push(429);
      return sendText(res, 429, "Too Many Requests", {
        ...headers,
        "x-ratelimit-remaining": "0",
        "retry-after": String(resetIn),
      });
    }
    used++;
    statuses.push(200);
    sendJson(
      res,
      200,
      { results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false } },
      headers,
    );
  });
  cleanups.push(server.close);
  return { server, statuses };
}

describe("the shared rate governor", () => {
  it("lets requests through before it has seen any headers", async () => {
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "t", service: "http://svc", prefix });
    await g.acquire();
    expect(g.waitedMs).toBe(0);
  });

  it("spends the remaining budget a response reported, then waits for the reset", async () => {
    const { redis, prefix } = await redisFor();
    const waits: number[] = [];
    const g = createRateGovernor({
      redis,
      token: "t",
      service: "http://svc",
      prefix,
      jitterMs: 0,
      sleep: async (ms) => {
        waits.push(ms);
        // Let the window pass in Redis's eyes by rewriting the reset.
        await redis.hset(g.key, "hi", 0);
      },
    });
    const resetAt = Date.now() + 1000;
    const answer = (remaining: number) => ({
      rateLimit: {
        limit: 5,
        remaining,
        resetAt,
        resetUnit: "delta-seconds" as const,
        resetPrecisionMs: 1000,
      },
      retryAfterMs: undefined,
    });
    await g.observe(answer(2));
    const first = await g.acquire();
    // Unanswered, a granted request holds its slot.
    expect(await g.state()).toMatchObject({ remaining: 2, inFlight: 1 });
    await g.observe(answer(1), first);
    await g.observe(answer(0), await g.acquire());
    expect(waits).toEqual([]);
    expect(await g.state()).toMatchObject({ remaining: 0, inFlight: 0 });
    await g.acquire();
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(0);
    expect(waits[0]).toBeLessThanOrEqual(1000);
    // The fresh window starts full; the request just let through is in flight.
    expect(await g.state()).toMatchObject({ limit: 5, remaining: 5, inFlight: 1 });
  });

  it("keeps the lower remaining when responses of one window arrive out of order", async () => {
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "t", service: "http://svc", prefix });
    const resetAt = Date.now() + 30_000;
    await g.observe({
      rateLimit: { limit: 100, remaining: 40, resetAt, resetUnit: "delta-seconds", resetPrecisionMs: 1000 },
      retryAfterMs: undefined,
    });
    await g.observe({
      rateLimit: { limit: 100, remaining: 55, resetAt, resetUnit: "delta-seconds", resetPrecisionMs: 1000 },
      retryAfterMs: undefined,
    });
    expect((await g.state()).remaining).toBe(40);
  });

  it("stops every worker sharing the token after a 429 until Retry-After has passed", async () => {
    const { redis, prefix } = await redisFor();
    const other = await withTestRedis();
    cleanups.push(other.cleanup);
    const a = createRateGovernor({ redis, token: "shared", service: "http://svc", prefix });
    const waits: number[] = [];
    const b = createRateGovernor({
      redis: other.redis,
      token: "shared",
      service: "http://svc",
      prefix,
      jitterMs: 0,
      sleep: async (ms) => {
        waits.push(ms);
        throw new Error("stop here");
      },
    });
    await a.observe({ rateLimit: undefined, retryAfterMs: 5000 });
    await expect(b.acquire()).rejects.toThrow("stop here");
    expect(waits[0]).toBeGreaterThan(4000);
    expect(waits[0]).toBeLessThanOrEqual(5000);
  });

  it("keeps two clients with separate connections within one budget: the service never answers 429", async () => {
    const { server, statuses } = await limitedService(8, 1000);
    const { redis, prefix } = await redisFor();
    const other = await withTestRedis();
    cleanups.push(other.cleanup);
    const clients = [redis, other.redis].map((r) => {
      const g = createRateGovernor({ redis: r, token: "shared", service: "http://svc", prefix });
      return createClient({
        baseUrl: server.baseUrl,
        token: "shared",
        ...g.clientHooks(),
        retry: { maxAttempts: 1 },
      });
    });
    // Prime the budget with one call so the governor has seen the headers.
    await clients[0]!.searchSegments();
    const calls = Array.from({ length: 18 }, (_, i) => clients[i % 2]!.searchSegments());
    await Promise.all(calls);
    expect(statuses).toHaveLength(19);
    expect(statuses.filter((s) => s === 429)).toEqual([]);
  });

  it("sends one request first while no budget is known, so a cold burst meets no 429", async () => {
    const { server, statuses } = await limitedService(3, 60_000);
    const { redis, prefix } = await redisFor();
    const other = await withTestRedis();
    cleanups.push(other.cleanup);
    const clients = [redis, other.redis].map((r) => {
      const g = createRateGovernor({ redis: r, token: "cold", service: "http://svc", prefix });
      return createClient({
        baseUrl: server.baseUrl,
        token: "cold",
        ...g.clientHooks(),
        retry: { maxAttempts: 1 },
      });
    });
    // Eight calls at once on a budget nobody has seen, three allowed: without a probe all eight go out together.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        clients[i % 2]!.searchSegments({}, { signal: AbortSignal.timeout(1500) }),
      ),
    );
    expect(statuses.filter((st) => st === 429)).toEqual([]);
    expect(statuses).toHaveLength(3);
    // The other five wait for the reset a minute away; the test stops them.
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(3);
  });

  it("does not hold requests back at a service that sends no rate-limit headers", async () => {
    let inFlight = 0;
    let most = 0;
    const server = await startTestServer((_req, res) => {
      most = Math.max(most, ++inFlight);
      setTimeout(() => {
        inFlight--;
        sendJson(res, 200, {
          results: [],
          total: 0,
          pageInfo: { hasNextPage: false, hasPreviousPage: false },
        });
      }, 50);
    });
    cleanups.push(server.close);
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "bare", service: "http://svc", prefix });
    const client = createClient({
      baseUrl: server.baseUrl,
      token: "bare",
      ...g.clientHooks(),
      retry: { maxAttempts: 1 },
    });
    await client.searchSegments();
    await Promise.all(Array.from({ length: 6 }, () => client.searchSegments()));
    expect(most).toBe(6);
  });

  it("never stores the token itself in Redis", async () => {
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "very-secret-token", service: "http://svc", prefix });
    await g.observe({
      rateLimit: {
        limit: 1,
        remaining: 1,
        resetAt: Date.now() + 1000,
        resetUnit: "delta-seconds",
        resetPrecisionMs: 1000,
      },
      retryAfterMs: undefined,
    });
    await g.release(await g.acquire());
    const keys = await redis.keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key).not.toContain("very-secret-token");
  });

  it("keeps one budget per token and service: a budget spent at one service does not hold back another", async () => {
    const { redis, prefix } = await redisFor();
    const emulator = createRateGovernor({
      redis,
      token: "same",
      service: "http://127.0.0.1:4010/api/public/v1",
      prefix,
    });
    const production = createRateGovernor({
      redis,
      token: "same",
      service: "https://svc.test/api/public/v1",
      prefix,
    });
    expect(emulator.key).not.toBe(production.key);
    await emulator.observe({ rateLimit: undefined, retryAfterMs: 60_000 });
    const ac = new AbortController();
    const t = setTimeout(() => ac.abort(new Error("waited")), 2000);
    await production.acquire({ signal: ac.signal });
    clearTimeout(t);
    expect(production.waitedMs).toBe(0);
  });

  it("ends a wait for the budget as soon as the caller aborts, through the client's signal", async () => {
    const { server } = await limitedService(1, 60_000);
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "t", service: server.baseUrl, prefix });
    const client = createClient({
      baseUrl: server.baseUrl,
      token: "t",
      retry: { maxAttempts: 1 },
      ...g.clientHooks(),
    });
    await client.searchSegments();
    const ac = new AbortController();
    const started = Date.now();
    const call = client.searchSegments({}, { signal: ac.signal });
    setTimeout(() => ac.abort(new Error("shutting down")), 200);
    await expect(call).rejects.toThrow("shutting down");
    // The window is a minute long: only the abort can have ended the wait.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

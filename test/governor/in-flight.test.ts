import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import { createRateGovernor } from "../../src/governor/index.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { cleanupsPerTest } from "../helpers/redis.ts";
import { type FixedWindowOptions, startFixedWindowService } from "./fixed-window-service.ts";

const HOLDER = fileURLToPath(new URL("./fixtures/hold-permits.ts", import.meta.url));

const { cleanups, redisFor } = cleanupsPerTest();

const variants: [string, Partial<FixedWindowOptions>][] = [
  ["windows opened by the first request, Reset in seconds from now", {}],
  ["windows on a fixed grid", { windows: "aligned" }],
  ["Reset as epoch seconds", { resetUnit: "epoch-seconds" }],
];

describe("headroom for the requests in flight only", () => {
  it.each(variants)(
    "fills every window of a round quota with no 429: 4 clients × 2 in flight, 20 per 2 s (%s)",
    async (_name, shape) => {
      const service = await startFixedWindowService({
        limit: 20,
        windowMs: 2000,
        maxLatencyMs: 15,
        ...shape,
      });
      cleanups.push(service.close);
      const { redis, prefix } = await redisFor();
      const clients = [];
      const governors = [];
      for (let i = 0; i < 4; i++) {
        // One connection per client, as separate processes would have.
        const own = i === 0 ? redis : (await redisFor()).redis;
        const g = createRateGovernor({
          redis: own,
          token: "shared",
          service: service.server.baseUrl,
          prefix,
        });
        governors.push(g);
        clients.push(
          createClient({
            baseUrl: service.server.baseUrl,
            token: "shared",
            retry: { maxAttempts: 1 },
            ...g.clientHooks(),
          }),
        );
      }
      // The first answer teaches the governor the budget; then 59 more, two at a time per client.
      await clients[0]!.searchSegments();
      let left = 59;
      await Promise.all(
        clients.flatMap((c) =>
          [0, 1].map(async () => {
            while (left > 0) {
              left--;
              await c.searchSegments();
            }
          }),
        ),
      );
      expect(service.statuses.filter((s) => s !== 200)).toEqual([]);
      expect(service.statuses).toHaveLength(60);
      if (shape.windows !== "aligned") {
        // 60 requests in windows of 20: three windows, none spilled into a fourth.
        expect(service.windowsOpened()).toBe(3);
      }
      await Promise.all(governors.map((g) => g.settled()));
      expect((await governors[0]!.state()).inFlight).toBe(0);
    },
  );

  it("counts a request as in flight from its grant to its answer, across processes", async () => {
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "t", service: "http://svc", prefix });
    const other = createRateGovernor({
      redis: (await redisFor()).redis,
      token: "t",
      service: "http://svc",
      prefix,
    });
    const resetAt = Date.now() + 60_000;
    const answer = (remaining: number) => ({
      rateLimit: {
        limit: 10,
        remaining,
        resetAt,
        resetUnit: "delta-seconds" as const,
        resetPrecisionMs: 1000,
      },
      retryAfterMs: undefined,
      receivedAt: Date.now(),
    });
    await g.observe(answer(3));
    const a = await g.acquire();
    const b = await other.acquire();
    expect(await g.state()).toMatchObject({ remaining: 3, inFlight: 2 });
    // b's answer counts a as well (the service took a first): merged, then nothing is counted twice.
    await other.observe(answer(1), b);
    expect(await g.state()).toMatchObject({ remaining: 1, inFlight: 1 });
    // a's answer came back late with a higher remaining: the lower one stands.
    await g.observe(answer(2), a);
    expect(await g.state()).toMatchObject({ remaining: 1, inFlight: 0, pausedUntil: undefined });
    // A request that got no answer gives its slot back.
    const c = await g.acquire();
    expect(await g.state()).toMatchObject({ inFlight: 1 });
    expect((await g.state()).pausedUntil).toBeGreaterThan(Date.now());
    await g.release(c);
    expect(await g.state()).toMatchObject({ remaining: 1, inFlight: 0 });
  });

  it("frees the slot of a request whose connection failed, through the client's afterRequest", async () => {
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "t", service: "http://127.0.0.1:9", prefix });
    await g.observe({
      rateLimit: {
        limit: 10,
        remaining: 5,
        resetAt: Date.now() + 60_000,
        resetUnit: "delta-seconds",
        resetPrecisionMs: 1000,
      },
      retryAfterMs: undefined,
    });
    const client = createClient({
      baseUrl: "http://127.0.0.1:9/api/public/v1",
      token: "t",
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      ...g.clientHooks(),
    });
    await expect(client.searchSegments()).rejects.toMatchObject({ code: "network_error" });
    expect(await g.state()).toMatchObject({ remaining: 5, inFlight: 0 });
  });

  it("ends the count of an answered request even when a hook wrapper drops the permit", async () => {
    const service = await startFixedWindowService({ limit: 50, windowMs: 60_000 });
    cleanups.push(service.close);
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "t", service: service.server.baseUrl, prefix });
    const hooks = g.clientHooks();
    const client = createClient({
      baseUrl: service.server.baseUrl,
      token: "t",
      // A wrapper written before permits existed: it awaits the acquire and returns nothing.
      beforeRequest: async (op, signal) => {
        await hooks.beforeRequest(op, signal);
      },
      onResponse: hooks.onResponse,
    });
    for (let i = 0; i < 5; i++) await client.searchSegments();
    await g.settled();
    expect(await g.state()).toMatchObject({ remaining: 45, inFlight: 0 });
  });

  it("takes the next permit ahead when an answer comes, and gives it back when no request follows", async () => {
    const service = await startFixedWindowService({ limit: 50, windowMs: 60_000 });
    cleanups.push(service.close);
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "t", service: service.server.baseUrl, prefix });
    const client = createClient({ baseUrl: service.server.baseUrl, token: "t", ...g.clientHooks() });
    await client.searchSegments();
    await client.searchSegments();
    // The second request's answer took a permit for a third request that never comes.
    let state = await g.state();
    for (let i = 0; i < 250 && state.inFlight > 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      state = await g.state();
    }
    expect(state).toMatchObject({ remaining: 48, inFlight: 0 });
    expect(service.statuses).toEqual([200, 200]);
  });

  it("lets the in-flight count of a killed process expire with its lease", async () => {
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "killed", service: "http://svc", prefix });
    await g.observe({
      rateLimit: {
        limit: 10,
        remaining: 2,
        // The window lasts a minute: only an expired lease can free a slot sooner.
        resetAt: Date.now() + 60_000,
        resetUnit: "delta-seconds",
        resetPrecisionMs: 1000,
      },
      retryAfterMs: undefined,
    });
    const child = spawn(process.execPath, ["--import", "tsx", HOLDER, REDIS_URL, prefix, "2", "1500"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const [line] = (await once(child.stdout, "data")) as [Buffer];
    expect(line.toString()).toContain("holding");
    expect(await g.state()).toMatchObject({ remaining: 2, inFlight: 2 });
    child.kill("SIGKILL");
    await once(child, "exit");
    // Both slots again: only once both of the killed process's leases have run out.
    const started = Date.now();
    const first = await g.acquire();
    const second = await g.acquire();
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(first.waitedMs + second.waitedMs).toBeGreaterThan(0);
    expect(await g.state()).toMatchObject({ remaining: 2, inFlight: 2 });
  });
});

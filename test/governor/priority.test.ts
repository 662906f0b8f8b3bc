import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import { createRateGovernor, type RateGovernor } from "../../src/governor/index.ts";
import { cleanupsPerTest } from "../helpers/redis.ts";
import { startFixedWindowService } from "./fixed-window-service.ts";

const { cleanups, redisFor } = cleanupsPerTest();

/** Resolves once `check` holds, looking every 20 ms. */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

/** A budget already spent, whose window lasts a minute. */
async function spentBudget(g: RateGovernor): Promise<void> {
  await g.observe({
    rateLimit: {
      limit: 5,
      remaining: 0,
      resetAt: Date.now() + 60_000,
      resetUnit: "delta-seconds",
      resetPrecisionMs: 1000,
    },
    retryAfterMs: undefined,
  });
}

describe("work a person waits for goes first", () => {
  it("gives the next slot to an interactive waiter before background waiters that came earlier", async () => {
    const service = await startFixedWindowService({ limit: 1, windowMs: 1000 });
    cleanups.push(service.close);
    const { redis, prefix } = await redisFor();
    // The importer wakes last after the reset: only its priority can win it the slot.
    const governorOn = async (jitterMs = 0) =>
      createRateGovernor({
        redis: (await redisFor()).redis,
        token: "shared",
        service: service.server.baseUrl,
        prefix,
        jitterMs,
      });
    const clientOf = (g: RateGovernor, priority: "interactive" | "background") =>
      createClient({
        baseUrl: service.server.baseUrl,
        token: "shared",
        retry: { maxAttempts: 1 },
        ...g.clientHooks({ priority }),
      });
    const watcher = createRateGovernor({ redis, token: "shared", service: service.server.baseUrl, prefix });
    const exporter = clientOf(await governorOn(), "background");
    // A scheduled export spends the window...
    await exporter.searchParticipants("export_0");
    // ...and three more of its requests, from three processes, wait for the next.
    const stop = new AbortController();
    const background = [1, 2, 3].map(async (i) =>
      clientOf(await governorOn(), "background")
        .searchParticipants(`export_${i}`, {}, { signal: stop.signal })
        .catch((err: unknown) => err),
    );
    await until(async () => (await watcher.state()).waiting.background === 3);
    // Then someone starts an import by hand.
    const importer = clientOf(await governorOn(300), "interactive");
    await importer.searchParticipants("import_1");
    // The import's request was the first the service counted after the export's first.
    expect(service.paths[1]).toContain("import_1");
    expect(service.statuses.filter((s) => s !== 200)).toEqual([]);
    stop.abort(new Error("test over"));
    await Promise.all(background);
    expect((await watcher.state()).waiting).toEqual({ interactive: 0, background: 0 });
  });

  it("lets background requests use the budget an interactive waiter does not need", async () => {
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "t", service: "http://svc", prefix });
    await g.observe({
      rateLimit: {
        limit: 5,
        remaining: 2,
        resetAt: Date.now() + 60_000,
        resetUnit: "delta-seconds",
        resetPrecisionMs: 1000,
      },
      retryAfterMs: undefined,
    });
    // An interactive acquirer registered as waiting (it is between two looks).
    await redis.zadd(g.keys.waitingInteractive, Date.now() + 30_000, "someone");
    // Two slots, one kept for it: one background request goes, the next waits.
    await g.acquire({ priority: "background" });
    const ac = new AbortController();
    const waits: number[] = [];
    const second = g.acquire({ priority: "background", signal: ac.signal, onWait: (ms) => waits.push(ms) });
    await until(async () => waits.length > 0);
    ac.abort(new Error("enough"));
    await expect(second).rejects.toThrow("enough");
    // The interactive one is not held back by what background took.
    await g.acquire({ priority: "interactive" });
  });
});

describe("waiting", () => {
  it.each(["interactive", "background"] as const)(
    "ends a %s wait promptly on abort and leaves nothing registered",
    async (priority) => {
      const { redis, prefix } = await redisFor();
      const g = createRateGovernor({ redis, token: "t", service: "http://svc", prefix });
      await spentBudget(g);
      const ac = new AbortController();
      const started = Date.now();
      const waiting = g.acquire({ priority, signal: ac.signal });
      await until(async () => (await g.state()).waiting[priority] === 1);
      ac.abort(new Error("shutting down"));
      await expect(waiting).rejects.toThrow("shutting down");
      // The window lasts a minute: only the abort can have ended the wait.
      expect(Date.now() - started).toBeLessThan(30_000);
      const state = await g.state();
      expect(state.waiting).toEqual({ interactive: 0, background: 0 });
      expect(state.inFlight).toBe(0);
      expect(await redis.zcard(g.keys.waitingInteractive)).toBe(0);
      expect(await redis.zcard(g.keys.waitingBackground)).toBe(0);
    },
  );

  it("tells the caller each wait and until when, and the permit carries the acquire's total", async () => {
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "t", service: "http://svc", prefix, jitterMs: 0 });
    await g.observe({
      rateLimit: {
        limit: 5,
        remaining: 0,
        resetAt: Date.now() + 1000,
        resetUnit: "delta-seconds",
        resetPrecisionMs: 1000,
      },
      retryAfterMs: undefined,
    });
    const told: { ms: number; until: number }[] = [];
    const before = Date.now();
    const permit = await g.acquire({ onWait: (ms, until) => told.push({ ms, until: until.getTime() }) });
    expect(told.length).toBeGreaterThan(0);
    expect(told[0]!.ms).toBeGreaterThan(0);
    expect(told[0]!.ms).toBeLessThanOrEqual(1000);
    expect(told[0]!.until).toBeGreaterThanOrEqual(before + told[0]!.ms);
    expect(permit.waitedMs).toBeGreaterThan(0);
    expect(g.waitedMs).toBeGreaterThanOrEqual(permit.waitedMs);
  });

  it("reports the paused state the ops API shows", async () => {
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "t", service: "http://svc", prefix });
    await spentBudget(g);
    const ac = new AbortController();
    const waiting = g.acquire({ priority: "background", signal: ac.signal }).catch((err: unknown) => err);
    await until(async () => (await g.state()).waiting.background === 1);
    const state = await g.state();
    expect(state).toMatchObject({
      limit: 5,
      remaining: 0,
      inFlight: 0,
      waiting: { interactive: 0, background: 1 },
    });
    expect(state.pausedUntil).toBeGreaterThan(Date.now() + 50_000);
    expect(state.resetAt).toBe(state.pausedUntil);
    ac.abort();
    await waiting;
  });

  it("ends an acquire with the error onWait throws, leaving nothing registered", async () => {
    const { redis, prefix } = await redisFor();
    const g = createRateGovernor({ redis, token: "t", service: "http://svc", prefix });
    await spentBudget(g);
    await expect(
      g.acquire({
        onWait: (ms) => {
          if (ms > 10_000) throw new Error("too long: move the job to delayed");
        },
      }),
    ).rejects.toThrow("move the job to delayed");
    expect((await g.state()).waiting).toEqual({ interactive: 0, background: 0 });
  });
});

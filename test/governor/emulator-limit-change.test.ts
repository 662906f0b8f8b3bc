import { describe, expect, it } from "vitest";
import { JournalReply, type LimitChange, rebuildWindows } from "../../bench/helpers/fleet-windows.ts";
import { createClient } from "../../src/api/index.ts";
import { createRateGovernor } from "../../src/governor/index.ts";
import { startTestEmulator } from "../helpers/emulator.ts";
import { cleanupsPerTest } from "../helpers/redis.ts";

const { cleanups, redisFor } = cleanupsPerTest();

const WINDOW_MS = 1000;

describe("the emulator's limit changed mid-run through its admin API", () => {
  it("a fleet of four follows a halved and then doubled limit, with at most one 429 each", async () => {
    const emu = await startTestEmulator({ rateLimit: "20/1s", sizes: { people: 50 } });
    cleanups.push(emu.close);
    const { redis, prefix } = await redisFor();
    const clients = [];
    for (let i = 0; i < 4; i++) {
      // One connection per client, as separate processes would have.
      const own = i === 0 ? redis : (await redisFor()).redis;
      const g = createRateGovernor({ redis: own, token: emu.token, service: emu.baseUrl, prefix });
      clients.push(
        createClient({
          baseUrl: emu.baseUrl,
          token: emu.token,
          retry: { maxAttempts: 1 },
          ...g.clientHooks(),
        }),
      );
    }
    const changes: LimitChange[] = [];
    const setLimit = async (quota: number) => {
      const res = await emu.admin("/rate-limit", {
        body: { requests: quota, windowSeconds: WINDOW_MS / 1000 },
      });
      expect(res.ok).toBe(true);
      changes.push({ at: Date.now(), quota });
    };
    const timers = [
      setTimeout(() => void setLimit(10), 2.5 * WINDOW_MS),
      setTimeout(() => void setLimit(40), 5.5 * WINDOW_MS),
    ];
    cleanups.push(async () => timers.forEach(clearTimeout));
    const started = Date.now();
    await Promise.all(
      clients.flatMap((c) =>
        [0, 1].map(async () => {
          while (Date.now() - started < 9 * WINDOW_MS) await c.searchSegments().catch(() => undefined);
        }),
      ),
    );
    expect(changes.map((c) => c.quota)).toEqual([10, 40]);

    const res = await emu.admin("/requests/journal");
    const entries = JournalReply.parse(await res.json()).entries;
    const [lowered, raised] = changes as [LimitChange, LimitChange];
    const tooMany = (from: number, to: number) =>
      entries.filter((e) => e.status === "429" && e.at >= from && e.at < to).length;
    const windows = rebuildWindows(entries, 20, WINDOW_MS, changes);
    const windowsAfter = (c: LimitChange) => windows.filter((w) => w.start >= c.at);
    const seen = JSON.stringify(windows.map((w) => [w.served, w.quota, w.tooMany]));
    expect(tooMany(0, lowered.at), seen).toBe(0);
    // At most one 429 for each change.
    expect(tooMany(lowered.at, raised.at), seen).toBeLessThanOrEqual(1);
    expect(tooMany(raised.at, Number.POSITIVE_INFINITY), seen).toBeLessThanOrEqual(1);
    // The lowered quota is still used, and the doubled one is used within one window of the change.
    expect(windowsAfter(lowered)[1]?.served, seen).toBeGreaterThan(0);
    expect(windowsAfter(raised)[1]?.served, seen).toBeGreaterThan(20);
  }, 30_000);
});

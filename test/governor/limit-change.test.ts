import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import { createRateGovernor } from "../../src/governor/index.ts";
import { cleanupsPerTest } from "../helpers/redis.ts";
import { startFixedWindowService } from "./fixed-window-service.ts";

const { cleanups, redisFor } = cleanupsPerTest();

const WINDOW_MS = 1000;
const RAISED = 40;

describe("a governor that follows the service's limit", () => {
  it.each([
    ["in the middle of a window", 0.5, 10],
    ["at a window's start", 0, 10],
    ["below the requests in flight, at a window's start", 0, 3],
  ])(
    "follows a limit lowered and then raised %s, with at most one 429 each",
    async (_name, offset, lowered) => {
      const options = { limit: 20, windowMs: WINDOW_MS, maxLatencyMs: 15, windows: "aligned" as const };
      const service = await startFixedWindowService(options);
      cleanups.push(service.close);
      const { redis, prefix } = await redisFor();
      // Four clients of one token, each with its own connection as separate processes would have, two requests each in flight.
      const clients = [];
      for (let i = 0; i < 4; i++) {
        const own = i === 0 ? redis : (await redisFor()).redis;
        const g = createRateGovernor({
          redis: own,
          token: "shared",
          service: service.server.baseUrl,
          prefix,
        });
        clients.push(
          createClient({
            baseUrl: service.server.baseUrl,
            token: "shared",
            retry: { maxAttempts: 1 },
            ...g.clientHooks(),
          }),
        );
      }
      const changedIn: number[] = [];
      const lower = setTimeout(
        () => {
          options.limit = lowered;
          changedIn.push(service.windowsOpened() - 1);
        },
        (3 + offset) * WINDOW_MS,
      );
      const raise = setTimeout(
        () => {
          options.limit = RAISED;
          changedIn.push(service.windowsOpened() - 1);
        },
        (6 + offset) * WINDOW_MS,
      );
      cleanups.push(async () => {
        clearTimeout(lower);
        clearTimeout(raise);
      });
      const started = Date.now();
      await Promise.all(
        clients.flatMap((c) =>
          [0, 1].map(async () => {
            while (Date.now() - started < 9 * WINDOW_MS) await c.searchSegments().catch(() => undefined);
          }),
        ),
      );

      const served = (w: number) =>
        service.statuses.filter((s, i) => s === 200 && service.windowOf[i] === w).length;
      const tooMany = service.statuses.filter((s) => s === 429).length;
      const [loweredIn = -1, raisedIn = -1] = changedIn;
      const seen = Array.from({ length: service.windowsOpened() }, (_, w) => served(w));
      // At most one 429 for each change: a probe of the window, never the fleet's whole in-flight burst.
      expect(tooMany, JSON.stringify({ seen, changedIn })).toBeLessThanOrEqual(2);
      // The lowered quota is still used, and the raised one is followed within one window.
      expect(served(loweredIn + 1), JSON.stringify(seen)).toBeGreaterThan(0);
      expect(served(raisedIn + 1), JSON.stringify(seen)).toBeGreaterThan(20);
    },
    30_000,
  );
});

import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import { createRateGovernor } from "../../src/governor/index.ts";
import { withTestRedis } from "../helpers/redis.ts";
import { startFixedWindowService } from "./fixed-window-service.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe("the reset, read finer than the header's whole seconds", () => {
  // Read as whole seconds alone, the first answer of a 2100 ms window puts
  // the reset 900 ms late (at 3 s); a 2000 ms window is read exactly anyway.
  it.each([2100, 2000])(
    "bounds a %i ms window's reset well inside the header's rounding, and never before it",
    async (windowMs) => {
      const service = await startFixedWindowService({ limit: 10_000, windowMs });
      cleanups.push(service.close);
      const { redis, prefix, cleanup } = await withTestRedis();
      cleanups.push(cleanup);
      const g = createRateGovernor({ redis, token: "t", service: service.server.baseUrl, prefix });
      const client = createClient({ baseUrl: service.server.baseUrl, token: "t", ...g.clientHooks() });
      const first = await g.state();
      expect(first.resetAt).toBeUndefined();
      // Requests one after another for a little over a second: one of them
      // lands just past a whole second before the reset.
      const started = Date.now();
      while (Date.now() - started < 1200) await client.searchSegments();
      expect(service.windowsOpened()).toBe(1);
      const trueReset = service.currentResetAt();
      const state = await g.state();
      // Both clocks are this machine's; the state's times passed through
      // Redis's clock and back, so allow a little either way.
      expect(state.resetAt).toBeGreaterThanOrEqual(trueReset - 50);
      expect(state.resetAt! - trueReset).toBeLessThan(500);
      expect(state.resetEarliest).toBeLessThanOrEqual(trueReset + 50);
    },
  );
});

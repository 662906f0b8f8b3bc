import { describe, expect, it } from "vitest";
import type { ApiClient, OperationId } from "../../src/api/index.ts";
import { createRateGovernor, type RateGovernor } from "../../src/governor/index.ts";
import { importHarness, paddedPeople, study4Definition } from "./fixtures.ts";

const h = importHarness();

// batchSize as most definitions have it (the default); rows of ~400 bytes, read on the parse thread.
const definition = study4Definition;
const people = (n: number) => paddedPeople(h.s, "quota", n);

/**
 * The real rate governor in front of a client of the test's emulator, as the
 * CLI and the workers build it, counting the import requests between the
 * governor's permit and the end of the attempt.
 */
function governedClient(): { client: ApiClient; governor: RateGovernor; most: () => number } {
  const governor = createRateGovernor({
    redis: h.redis.redis,
    token: h.emu.token,
    service: h.emu.baseUrl,
    prefix: h.redis.prefix,
  });
  const hooks = governor.clientHooks("background");
  let now = 0;
  let most = 0;
  const counted = (op: OperationId) => op === "importParticipants";
  const client = h.emu.clientFor({
    beforeRequest: async (op, signal) => {
      const permit = await hooks.beforeRequest(op, signal);
      if (counted(op)) most = Math.max(most, ++now);
      return permit;
    },
    onResponse: hooks.onResponse,
    afterRequest: async (permit, op) => {
      if (counted(op)) now--;
      await hooks.afterRequest(permit);
    },
  });
  return { client, governor, most: () => most };
}

async function importTooMany(): Promise<number> {
  return (await h.emu.requests()).byRoute.importParticipants?.["429"] ?? 0;
}

describe("requests in flight under a binding quota", () => {
  it("keeps more than imports.concurrency in flight while the quota binds, with no 429", async () => {
    // 25 requests of 1,000 people against 10 a 2 s window: the quota binds. Answers 150 ms late, so
    // requests overlap whenever the run lets them.
    await h.emu.admin("/rate-limit", { body: { requests: 10, windowSeconds: 2 } });
    await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: 150 } });
    const file = await people(25_000);
    const { client, governor, most } = governedClient();
    const report = await h.run(file, definition, {
      client,
      concurrency: 2,
      concurrencyUnderQuota: 6,
      quota: async () => (await governor.state()).limit,
    });
    await governor.settled();
    expect(report).toMatchObject({ imported: 25_000, rejected: 0, requests: 25 });
    expect(await h.importCalls()).toBe(25);
    expect(await importTooMany()).toBe(0);
    expect(most()).toBeGreaterThan(2);
    expect(most()).toBeLessThanOrEqual(6);
  }, 60_000);

  it("keeps imports.concurrency in flight when no quota binds", async () => {
    // 12 requests of the definition's 500 people against 600 a window: the quota does not bind.
    await h.emu.admin("/rate-limit", { body: { requests: 600, windowSeconds: 60 } });
    await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: 150 } });
    const file = await people(12_000);
    const { client, governor, most } = governedClient();
    const report = await h.run(file, definition, {
      client,
      concurrency: 2,
      concurrencyUnderQuota: 6,
      quota: async () => (await governor.state()).limit,
    });
    await governor.settled();
    expect(report).toMatchObject({ imported: 12_000, rejected: 0 });
    expect(await importTooMany()).toBe(0);
    expect(most()).toBe(2);
  }, 60_000);
});

import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import { runExport } from "../../src/exports/index.ts";
import { createRateGovernor } from "../../src/governor/index.ts";
import { startTestEmulator } from "../helpers/emulator.ts";
import { withTestRedis } from "../helpers/redis.ts";
import { definition, testWarehouse } from "./export-fixture.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/**
 * The governor keeps back only the requests in flight; the exports fetch each
 * page one ahead of the sink. Together, at a round quota of the real
 * emulator, two exports sharing one token fill the windows without a 429
 * (the client does not retry, so one would fail the export).
 */
describe("exports with pages fetched ahead, at a round quota", () => {
  it("never meet a 429: two exports sharing 20 requests per 2 s, 60 pages", async () => {
    const emu = await startTestEmulator({
      rateLimit: "20/2s",
      sizes: { participantsPerStudy: 150 },
    });
    cleanups.push(() => emu.close());
    // One Redis connection per export, as two processes would have; one budget under the first's prefix.
    const connections = [await withTestRedis(), await withTestRedis()];
    for (const c of connections) cleanups.push(c.cleanup);
    const prefix = connections[0]!.prefix;
    const runs = ["study_1", "study_2"].map(async (studyId, i) => {
      const redis = connections[i]!.redis;
      const governor = createRateGovernor({ redis, token: emu.token, service: emu.baseUrl, prefix });
      const client = createClient({
        baseUrl: emu.baseUrl,
        token: emu.token,
        retry: { maxAttempts: 1 },
        ...governor.clientHooks("background"),
      });
      const warehouse = await testWarehouse("duckdb");
      cleanups.push(() => warehouse.cleanup());
      const sink = await warehouse.open();
      try {
        const report = await runExport({
          definition: definition({ resources: ["participants"], studies: [studyId], pageSize: 5 }),
          client,
          sink,
          checkpointRows: 10,
        });
        await governor.settled();
        return report;
      } finally {
        await sink.close();
      }
    });
    const reports = await Promise.all(runs);
    for (const r of reports) {
      expect(r.status).toBe("succeeded");
      expect(r.resources.participants?.rows).toBe(150);
    }
    const counts = (await emu.requests()).byRoute.searchParticipants ?? {};
    expect(counts["429"]).toBeUndefined();
    expect(counts["200"]).toBe(60);
  }, 30_000);
});

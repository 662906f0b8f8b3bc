import { describe, expect, it } from "vitest";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { importHarness, paddedPeople, study4Definition } from "./fixtures.ts";

const h = importHarness({ rateLimit: "off" });

// batchSize as most definitions have it (the default); rows of ~400 bytes, read on the parse thread.
const definition = study4Definition;
const people = (n: number) => paddedPeople(h.s, "size", n);

const importCalls = () => h.importCalls();

function run(
  file: string,
  extra: { quota?: () => Promise<number | undefined>; maxBatchSize?: number },
  def = definition,
) {
  return h.run(file, def, extra);
}

describe("batch sizes by what binds", () => {
  it("sends a large file in requests of 1,000 when no quota binds and the definition leaves batchSize at its default", async () => {
    // Large enough that the estimate at the gate (which errs low, see below) passes 10,000.
    const file = await people(25_000);
    const report = await run(file, { quota: async () => 600 });
    expect(report).toMatchObject({ imported: 25_000, requests: 25 });
    expect(await importCalls()).toBe(25);
  }, 60_000);

  it("keeps a batchSize the definition sets when no quota binds, and the default for a small file", async () => {
    const chosen = ImportJobDefinition.parse({ ...study4Definition, batchSize: 400 });
    const report = await run(await people(25_000), { quota: async () => 600 }, chosen);
    expect(report).toMatchObject({ imported: 25_000, requests: 63 });
    const small = await run(await people(2_000), { quota: async () => 600 });
    expect(small).toMatchObject({ imported: 2_000, requests: 4 });
  }, 60_000);

  it("sends the contract's 1,000 people a request under a binding quota, the definition's hash unchanged", async () => {
    const file = await people(12_000);
    const report = await run(file, { quota: async () => 10 });
    expect(report).toMatchObject({ imported: 12_000, requests: 12 });
    expect(report.definitionHash).toBe((await run(file, {})).definitionHash);
  }, 60_000);

  it("sends the first request full while the quota is not known, and sizes the rest by its answer", async () => {
    // Large enough that the estimate of its people (which counts the reader's read-ahead as read, so errs low) passes 10,000.
    const file = await people(25_000);
    let asked = 0;
    // Unknown before the first answer, then a quota that binds.
    const report = await run(file, { quota: async () => (asked++ === 0 ? undefined : 10) });
    expect(report).toMatchObject({ imported: 25_000, requests: 25 });
    const ledgerKeys = await h.redis.redis.keys(`${h.redis.prefix}:import-ledger:*`);
    const runRecord = JSON.parse((await h.redis.redis.hget(ledgerKeys[0] as string, "run")) as string);
    expect(runRecord.batching).toEqual({ first: 1000, rest: 1000, probe: true });
  }, 60_000);

  it("caps requests at imports.maxBatchSize for a service whose limit is lower", async () => {
    const file = await people(12_000);
    const report = await run(file, { quota: async () => 10, maxBatchSize: 300 });
    expect(report).toMatchObject({ imported: 12_000, requests: 40 });
  }, 60_000);
});

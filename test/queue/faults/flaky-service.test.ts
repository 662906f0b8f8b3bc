import { describe, expect, it } from "vitest";
import {
  addParticipants,
  answered,
  createProject,
  exportJob,
  faultHarness,
  importJob,
  notExactlyOnce,
  openTestQueues,
  participantIds,
  peopleCsv,
  readWarehouse,
  startWorkerProcess,
  waitForCompletion,
} from "../helpers.ts";

const h = faultHarness();

describe("a service that answers 5% of requests with 500, after a random delay", () => {
  it("still gets every imported person once, and the warehouse every participant", async () => {
    const ROWS = 2000;
    const BATCHES = ROWS / 50;
    await addParticipants(h.emu, "study_5", "flaky", 1500);
    const expected = await participantIds(h.emu, "study_5");
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: { "faults-import": importJob(50), "faults-export": exportJob(["study_5"], 50) },
    });
    const { csv, emails } = peopleCsv("flaky", ROWS);
    const file = await h.project.file("people.csv", csv);
    await h.emu.admin("/faults", { body: { route: "*", errorRate: 0.05, latencyMs: [0, 100] } });
    h.tq = openTestQueues(h.project);

    const worker = startWorkerProcess(h.project);
    h.workers.push(worker);
    await worker.ready;
    const importId = await h.tq.importFile(file, "faults-import");
    const exportId = await h.tq.exportJob("faults-export");
    const imported = await waitForCompletion(h.tq, "imports", importId, { context: worker.tail });
    await waitForCompletion(h.tq, "exports", exportId, { context: worker.tail });
    expect((await worker.stop()).code, worker.tail()).toBe(0);

    const requests = await h.emu.requests();
    expect(requests.byStatus["500"] ?? 0, "the fault must have struck").toBeGreaterThan(0);
    // A 500 is answered before the import is applied: each batch went through exactly once.
    expect(await answered(h.emu, "importParticipants")).toBe(BATCHES);
    expect(await notExactlyOnce(h.emu, emails)).toEqual([]);
    expect(imported.returnvalue).toMatchObject({ rowsRead: ROWS, imported: ROWS, rejected: 0 });

    const warehouse = await readWarehouse(h.project.warehouseFile);
    const ids = warehouse.participants.map((p) => p.participantId);
    expect(ids.length).toBe(expected.length);
    expect(new Set(ids)).toEqual(new Set(expected));
    expect(warehouse.runs.map((r) => r.status)).toEqual(["succeeded"]);
    expect(await h.tq.counts("imports")).toMatchObject({ completed: 1, failed: 0 });
    expect(await h.tq.counts("exports")).toMatchObject({ completed: 1, failed: 0 });
  }, 60_000);
});

import { describe, expect, it } from "vitest";
import {
  addParticipants,
  answered,
  createProject,
  exportJob,
  faultHarness,
  IMPORT_IN_FLIGHT,
  importJob,
  notExactlyOnce,
  openTestQueues,
  participantIds,
  peopleCsv,
  readWarehouse,
  startWorkerProcess,
  waitForCompletion,
  waitUntil,
} from "../helpers.ts";

// A short window: the storm's 429s say "retry in a second or two", not in a minute.
const h = faultHarness({ emulator: { rateLimit: "100000/2s" } });

describe("a storm of 429s from the service", () => {
  it("pauses the fleet and fails no job: every import and export completes", async () => {
    const ROWS = 1500;
    const BATCHES = ROWS / 50;
    await addParticipants(h.emu, "study_5", "storm", 1500);
    const expected = await participantIds(h.emu, "study_5");
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      // The client gives up on the first 429, so the storm reaches the queue: jobs go back with queue.rateLimit.
      retry: { maxAttempts: 1 },
      jobs: { "faults-import": importJob(50), "faults-export": exportJob(["study_5"], 50) },
    });
    const a = peopleCsv("storm-a", ROWS);
    const b = peopleCsv("storm-b", ROWS);
    const fileA = await h.project.file("a.csv", a.csv);
    const fileB = await h.project.file("b.csv", b.csv);
    await h.emu.admin("/faults", { body: { route: "*", latencyMs: [20, 50] } });
    h.tq = openTestQueues(h.project);

    const fleet = [startWorkerProcess(h.project, "worker 1"), startWorkerProcess(h.project, "worker 2")];
    h.workers.push(...fleet);
    await Promise.all(fleet.map((w) => w.ready));
    const tails = () => fleet.map((w) => w.tail()).join("");
    const ids = {
      a: await h.tq.importFile(fileA, "faults-import"),
      b: await h.tq.importFile(fileB, "faults-import"),
      export: await h.tq.exportJob("faults-export"),
    };
    await waitUntil(
      "the first import requests",
      async () => (await answered(h.emu, "importParticipants")) >= 4,
      {
        context: tails,
      },
    );
    await h.emu.admin("/faults", { body: { route: "*", stormSeconds: 6 } });

    const jobs = [
      await waitForCompletion(h.tq, "imports", ids.a, { context: tails }),
      await waitForCompletion(h.tq, "imports", ids.b, { context: tails }),
      await waitForCompletion(h.tq, "exports", ids.export, { context: tails }),
    ];
    for (const w of fleet) expect((await w.stop()).code, w.tail()).toBe(0);

    const requests = await h.emu.requests();
    expect(requests.byStatus["429"] ?? 0, "the storm must have struck").toBeGreaterThan(0);
    expect(await h.tq.counts("imports")).toMatchObject({ completed: 2, failed: 0 });
    expect(await h.tq.counts("exports")).toMatchObject({ completed: 1, failed: 0 });
    // Put back by the storm without spending an attempt: started more often than attempted.
    for (const job of jobs) expect(job.attemptsMade).toBe(1);
    expect(jobs.some((job) => job.attemptsStarted > 1)).toBe(true);
    // Paused, not hammering: about one 429 per request in flight (two per job: an import's concurrency, an
    // export's page and the one fetched ahead) and rate window (2 s) of the storm, not one per request.
    expect(requests.byStatus["429"]).toBeLessThanOrEqual(jobs.length * IMPORT_IN_FLIGHT * 4);

    const sent = await answered(h.emu, "importParticipants");
    expect(sent - 2 * BATCHES).toBeLessThanOrEqual(2 * IMPORT_IN_FLIGHT);
    expect(await notExactlyOnce(h.emu, [...a.emails, ...b.emails])).toEqual([]);
    const warehouse = await readWarehouse(h.project.warehouseFile);
    expect(new Set(warehouse.participants.map((p) => p.participantId))).toEqual(new Set(expected));
  }, 60_000);
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../helpers/emulator.ts";
import {
  addParticipants,
  answered,
  createProject,
  exportJob,
  IMPORT_IN_FLIGHT,
  importJob,
  notExactlyOnce,
  openTestQueues,
  type Project,
  participantIds,
  peopleCsv,
  type RedisServer,
  readWarehouse,
  startRedisServer,
  startWorkerProcess,
  type TestQueues,
  type WorkerProcess,
  waitForCompletion,
  waitUntil,
} from "../helpers.ts";

let redis: RedisServer;
let emu: TestEmulator;
let project: Project | undefined;
let tq: TestQueues | undefined;
const workers: WorkerProcess[] = [];

beforeEach(async () => {
  redis = await startRedisServer();
  // A short window: the storm's 429s say "retry in a second or two", not in a minute.
  emu = await startTestEmulator({ rateLimit: "100000/2s" });
});
afterEach(async () => {
  for (const w of workers.splice(0)) w.kill("SIGKILL");
  await tq?.close();
  await emu.close();
  await redis.close();
  await project?.cleanup();
  project = undefined;
  tq = undefined;
});

describe("a storm of 429s from the service", () => {
  it("pauses the fleet and fails no job: every import and export completes", async () => {
    const ROWS = 1500;
    const BATCHES = ROWS / 50;
    await addParticipants(emu, "study_5", "storm", 1500);
    const expected = await participantIds(emu, "study_5");
    project = await createProject({
      redisUrl: redis.url,
      emulator: emu,
      // The client gives up on the first 429, so the storm reaches the queue: jobs go back with queue.rateLimit.
      retry: { maxAttempts: 1 },
      jobs: { "faults-import": importJob(50), "faults-export": exportJob(["study_5"], 50) },
    });
    const a = peopleCsv("storm-a", ROWS);
    const b = peopleCsv("storm-b", ROWS);
    const fileA = await project.file("a.csv", a.csv);
    const fileB = await project.file("b.csv", b.csv);
    await emu.admin("/faults", { body: { route: "*", latencyMs: [20, 50] } });
    tq = openTestQueues(project);

    const fleet = [startWorkerProcess(project, "worker 1"), startWorkerProcess(project, "worker 2")];
    workers.push(...fleet);
    await Promise.all(fleet.map((w) => w.ready));
    const tails = () => fleet.map((w) => w.tail()).join("");
    const ids = {
      a: await tq.importFile(fileA, "faults-import"),
      b: await tq.importFile(fileB, "faults-import"),
      export: await tq.exportJob("faults-export"),
    };
    await waitUntil(
      "the first import requests",
      async () => (await answered(emu, "importParticipants")) >= 4,
      {
        context: tails,
      },
    );
    await emu.admin("/faults", { body: { route: "*", stormSeconds: 6 } });

    const jobs = [
      await waitForCompletion(tq, "imports", ids.a, { context: tails }),
      await waitForCompletion(tq, "imports", ids.b, { context: tails }),
      await waitForCompletion(tq, "exports", ids.export, { context: tails }),
    ];
    for (const w of fleet) expect((await w.stop()).code, w.tail()).toBe(0);

    const requests = await emu.requests();
    expect(requests.byStatus["429"] ?? 0, "the storm must have struck").toBeGreaterThan(0);
    expect(await tq.counts("imports")).toMatchObject({ completed: 2, failed: 0 });
    expect(await tq.counts("exports")).toMatchObject({ completed: 1, failed: 0 });
    // Put back by the storm without spending an attempt: started more often than attempted.
    for (const job of jobs) expect(job.attemptsMade).toBe(1);
    expect(jobs.some((job) => job.attemptsStarted > 1)).toBe(true);
    // Paused, not hammering: about one 429 per request in flight (two per job: an import's concurrency, an
    // export's page and the one fetched ahead) and rate window (2 s) of the storm, not one per request.
    expect(requests.byStatus["429"]).toBeLessThanOrEqual(jobs.length * IMPORT_IN_FLIGHT * 4);

    const sent = await answered(emu, "importParticipants");
    expect(sent - 2 * BATCHES).toBeLessThanOrEqual(2 * IMPORT_IN_FLIGHT);
    expect(await notExactlyOnce(emu, [...a.emails, ...b.emails])).toEqual([]);
    const warehouse = await readWarehouse(project.warehouseFile);
    expect(new Set(warehouse.participants.map((p) => p.participantId))).toEqual(new Set(expected));
  }, 60_000);
});

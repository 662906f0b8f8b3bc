import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../helpers/emulator.ts";
import {
  addParticipants,
  answered,
  createProject,
  exportJob,
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
} from "../helpers.ts";

let redis: RedisServer;
let emu: TestEmulator;
let project: Project | undefined;
let tq: TestQueues | undefined;
const workers: WorkerProcess[] = [];

beforeEach(async () => {
  redis = await startRedisServer();
  emu = await startTestEmulator();
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

describe("a service that answers 5% of requests with 500, after a random delay", () => {
  it("still gets every imported person once, and the warehouse every participant", async () => {
    const ROWS = 2000;
    const BATCHES = ROWS / 50;
    await addParticipants(emu, "study_5", "flaky", 1500);
    const expected = await participantIds(emu, "study_5");
    project = await createProject({
      redisUrl: redis.url,
      emulator: emu,
      jobs: { "faults-import": importJob(50), "faults-export": exportJob(["study_5"], 50) },
    });
    const { csv, emails } = peopleCsv("flaky", ROWS);
    const file = await project.file("people.csv", csv);
    await emu.admin("/faults", { body: { route: "*", errorRate: 0.05, latencyMs: [0, 100] } });
    tq = openTestQueues(project);

    const worker = startWorkerProcess(project);
    workers.push(worker);
    await worker.ready;
    const importId = await tq.importFile(file, "faults-import");
    const exportId = await tq.exportJob("faults-export");
    const imported = await waitForCompletion(tq, "imports", importId, { context: worker.tail });
    await waitForCompletion(tq, "exports", exportId, { context: worker.tail });
    expect((await worker.stop()).code, worker.tail()).toBe(0);

    const requests = await emu.requests();
    expect(requests.byStatus["500"] ?? 0, "the fault must have struck").toBeGreaterThan(0);
    // A 500 is answered before the import is applied: each batch went through exactly once.
    expect(await answered(emu, "importParticipants")).toBe(BATCHES);
    expect(await notExactlyOnce(emu, emails)).toEqual([]);
    expect(imported.returnvalue).toMatchObject({ rowsRead: ROWS, imported: ROWS, rejected: 0 });

    const warehouse = await readWarehouse(project.warehouseFile);
    const ids = warehouse.participants.map((p) => p.participantId);
    expect(ids.length).toBe(expected.length);
    expect(new Set(ids)).toEqual(new Set(expected));
    expect(warehouse.runs.map((r) => r.status)).toEqual(["succeeded"]);
    expect(await tq.counts("imports")).toMatchObject({ completed: 1, failed: 0 });
    expect(await tq.counts("exports")).toMatchObject({ completed: 1, failed: 0 });
  }, 60_000);
});

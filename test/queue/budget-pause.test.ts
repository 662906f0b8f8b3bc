import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import {
  answered,
  createProject,
  importJob,
  notExactlyOnce,
  openTestQueues,
  type Project,
  peopleCsv,
  type RedisServer,
  startRedisServer,
  startWorkerProcess,
  type TestQueues,
  type WorkerProcess,
  waitForCompletion,
} from "./helpers.ts";

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

describe("a job that meets a spent budget for longer than queue.budgetWaitBoundMs", () => {
  it("waits in delayed, comes back at the reset, and finishes: every batch sent once", async () => {
    const QUOTA = 4;
    const BATCHES = 10;
    const limited = await emu.admin("/rate-limit", { body: { requests: QUOTA, windowSeconds: 4 } });
    expect(limited.status).toBe(200);
    project = await createProject({
      redisUrl: redis.url,
      emulator: emu,
      // Any wait on the budget is longer than the bound: the job goes to delayed at every reset it meets.
      queue: { budgetWaitBoundMs: 500 },
      jobs: { "pause-import": importJob(5) },
    });
    const people = peopleCsv("pause", BATCHES * 5);
    const file = await project.file("people.csv", people.csv);
    tq = openTestQueues(project);
    const worker = startWorkerProcess(project, "worker");
    workers.push(worker);
    await worker.ready;

    const id = await tq.importFile(file, "pause-import");
    const job = await waitForCompletion(tq, "imports", id, {
      timeoutMs: 60_000,
      context: () => worker.tail(),
    });
    expect(job.returnvalue).toMatchObject({ imported: BATCHES * 5 });
    // Paused, not failed: no attempt spent on the waits, and it really went to delayed.
    expect(job.attemptsMade).toBe(1);
    expect(job.attemptsStarted).toBeGreaterThan(1);
    expect(await answered(emu, "importParticipants")).toBe(BATCHES);
    expect(await notExactlyOnce(emu, people.emails)).toEqual([]);
    expect((await emu.requests()).byStatus["429"] ?? 0).toBe(0);
  }, 90_000);
});

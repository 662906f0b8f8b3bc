import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../helpers/emulator.ts";
import {
  answered,
  createProject,
  IMPORT_IN_FLIGHT,
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
  waitUntil,
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

describe("a worker stopped with SIGTERM in the middle of an import", () => {
  it("exits 0 within the deadline, the job goes back to the queue and the next worker imports everyone once", async () => {
    const ROWS = 3000;
    const BATCHES = ROWS / 50;
    const DEADLINE_MS = 10_000;
    project = await createProject({
      redisUrl: redis.url,
      emulator: emu,
      queue: { shutdownDeadlineMs: DEADLINE_MS },
      jobs: { "faults-import": importJob(50) },
    });
    const { csv, emails } = peopleCsv("sigterm", ROWS);
    const file = await project.file("people.csv", csv);
    // The batches left would take longer than the deadline: only an interrupted job lets the worker go in time.
    await emu.admin("/faults", { body: { route: "importParticipants", latencyMs: [150, 250] } });
    tq = openTestQueues(project);

    const first = startWorkerProcess(project, "first worker");
    workers.push(first);
    await first.ready;
    const jobId = await tq.importFile(file, "faults-import");
    await waitUntil("5 import requests", async () => (await answered(emu, "importParticipants")) >= 5, {
      context: first.tail,
    });
    const t0 = Date.now();
    const exit = await first.stop();
    const tookMs = Date.now() - t0;
    expect(exit, first.tail()).toEqual({ code: 0, signal: null });
    expect(tookMs, first.tail()).toBeLessThan(DEADLINE_MS);
    expect(first.stderr()).toContain("job interrupted by shutdown");
    expect(first.stderr()).toMatch(/"clean":true[^\n]*"msg":"worker stopped"/);

    // Back in the queue, untouched: not failed, not active, no attempt spent.
    expect(["delayed", "wait", "prioritized"]).toContain(await tq.state("imports", jobId));
    const interrupted = await tq.job("imports", jobId);
    expect(interrupted?.attemptsMade).toBe(0);
    const sentByFirst = await answered(emu, "importParticipants");
    expect(sentByFirst).toBeLessThan(BATCHES);

    await emu.admin("/faults", { method: "DELETE" });
    const second = startWorkerProcess(project, "second worker");
    workers.push(second);
    await second.ready;
    const job = await waitForCompletion(tq, "imports", jobId, { context: second.tail });
    expect((await second.stop()).code, second.tail()).toBe(0);

    const sent = await answered(emu, "importParticipants");
    expect(sent).toBeGreaterThanOrEqual(BATCHES);
    expect(sent - BATCHES).toBeLessThanOrEqual(IMPORT_IN_FLIGHT);
    expect(await notExactlyOnce(emu, emails)).toEqual([]);
    expect(job.returnvalue).toMatchObject({ rowsRead: ROWS, imported: ROWS, rejected: 0 });
    expect(await tq.counts("imports")).toMatchObject({ completed: 1, failed: 0 });
  }, 60_000);
});

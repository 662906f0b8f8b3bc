import { describe, expect, it } from "vitest";
import {
  answered,
  createProject,
  faultHarness,
  importJob,
  notExactlyOnce,
  openTestQueues,
  peopleCsv,
  startWorkerProcess,
  waitForCompletion,
} from "./helpers.ts";

const h = faultHarness();

describe("a job that meets a spent budget for longer than queue.budgetWaitBoundMs", () => {
  it("waits in delayed, comes back at the reset, and finishes: every batch sent once", async () => {
    const QUOTA = 4;
    const BATCHES = 10;
    const limited = await h.emu.admin("/rate-limit", { body: { requests: QUOTA, windowSeconds: 4 } });
    expect(limited.status).toBe(200);
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      // Any wait on the budget is longer than the bound: the job goes to delayed at every reset it meets.
      queue: { budgetWaitBoundMs: 500 },
      jobs: { "pause-import": importJob(5) },
    });
    const people = peopleCsv("pause", BATCHES * 5);
    const file = await h.project.file("people.csv", people.csv);
    h.tq = openTestQueues(h.project);
    const worker = startWorkerProcess(h.project, "worker");
    h.workers.push(worker);
    await worker.ready;

    const id = await h.tq.importFile(file, "pause-import");
    const job = await waitForCompletion(h.tq, "imports", id, {
      timeoutMs: 60_000,
      context: () => worker.tail(),
    });
    expect(job.returnvalue).toMatchObject({ imported: BATCHES * 5 });
    // Paused, not failed: no attempt spent on the waits, and it really went to delayed.
    expect(job.attemptsMade).toBe(1);
    expect(job.attemptsStarted).toBeGreaterThan(1);
    expect(await answered(h.emu, "importParticipants")).toBe(BATCHES);
    expect(await notExactlyOnce(h.emu, people.emails)).toEqual([]);
    expect((await h.emu.requests()).byStatus["429"] ?? 0).toBe(0);
  }, 90_000);
});

import { describe, expect, it } from "vitest";
import {
  answered,
  createProject,
  faultHarness,
  IMPORT_IN_FLIGHT,
  importJob,
  notExactlyOnce,
  openTestQueues,
  peopleCsv,
  startWorkerProcess,
  waitForCompletion,
  waitUntil,
} from "../helpers.ts";

const h = faultHarness();

describe("a worker stopped with SIGTERM in the middle of an import", () => {
  it("exits 0 within the deadline, the job goes back to the queue and the next worker imports everyone once", async () => {
    const ROWS = 3000;
    const BATCHES = ROWS / 50;
    const DEADLINE_MS = 10_000;
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      queue: { shutdownDeadlineMs: DEADLINE_MS },
      jobs: { "faults-import": importJob(50) },
    });
    const { csv, emails } = peopleCsv("sigterm", ROWS);
    const file = await h.project.file("people.csv", csv);
    // The batches left would take longer than the deadline: only an interrupted job lets the worker go in time.
    await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: [150, 250] } });
    h.tq = openTestQueues(h.project);

    const first = startWorkerProcess(h.project, "first worker");
    h.workers.push(first);
    await first.ready;
    const jobId = await h.tq.importFile(file, "faults-import");
    await waitUntil("5 import requests", async () => (await answered(h.emu, "importParticipants")) >= 5, {
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
    expect(["delayed", "wait", "prioritized"]).toContain(await h.tq.state("imports", jobId));
    const interrupted = await h.tq.job("imports", jobId);
    expect(interrupted?.attemptsMade).toBe(0);
    const sentByFirst = await answered(h.emu, "importParticipants");
    expect(sentByFirst).toBeLessThan(BATCHES);

    await h.emu.admin("/faults", { method: "DELETE" });
    const second = startWorkerProcess(h.project, "second worker");
    h.workers.push(second);
    await second.ready;
    const job = await waitForCompletion(h.tq, "imports", jobId, { context: second.tail });
    expect((await second.stop()).code, second.tail()).toBe(0);

    const sent = await answered(h.emu, "importParticipants");
    expect(sent).toBeGreaterThanOrEqual(BATCHES);
    expect(sent - BATCHES).toBeLessThanOrEqual(IMPORT_IN_FLIGHT);
    expect(await notExactlyOnce(h.emu, emails)).toEqual([]);
    expect(job.returnvalue).toMatchObject({ rowsRead: ROWS, imported: ROWS, rejected: 0 });
    expect(await h.tq.counts("imports")).toMatchObject({ completed: 1, failed: 0 });
  }, 60_000);
});

describe("a worker stopped while it still starts", () => {
  it("takes a SIGTERM sent as soon as it says it started as a stop: exit 0, the stop logged", async () => {
    h.project = await createProject({ redisUrl: h.redis.url, emulator: h.emu, jobs: { crm: importJob(50) } });
    // The window after "worker started" (the alerts, then the wait for signals) is a few milliseconds:
    // three workers, each signalled the moment it says it started, so that one lands in it.
    for (const name of ["worker a", "worker b", "worker c"]) {
      const w = startWorkerProcess(h.project, name);
      h.workers.push(w);
      await w.ready;
      w.kill("SIGTERM");
      expect(await w.exited, w.tail()).toEqual({ code: 0, signal: null });
      expect(w.stderr()).toContain('"msg":"signal received"');
    }
  }, 60_000);
});

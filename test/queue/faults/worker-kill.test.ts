import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import {
  addParticipants,
  answered,
  createProject,
  exportJob,
  faultHarness,
  GiveUp,
  IMPORT_IN_FLIGHT,
  importJob,
  largePeopleCsv,
  notExactlyOnce,
  openTestQueues,
  type Project,
  participantIds,
  readWarehouse,
  startWorkerProcess,
  type WorkerProcess,
  waitForCompletion,
  waitUntil,
} from "../helpers.ts";

const h = faultHarness();

function worker(p: Project, name: string): WorkerProcess {
  const w = startWorkerProcess(p, name);
  h.workers.push(w);
  return w;
}

describe("a worker killed with SIGKILL and started again", () => {
  it("finishes an import with every person imported once and only the batch in flight sent twice", async () => {
    const ROWS = 3000;
    const BATCHES = ROWS / 50;
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: { "faults-import": importJob(50) },
    });
    // Over 4 MB: the import reads and maps it on its parse thread when the worker is killed.
    const { csv, emails } = largePeopleCsv("kill", ROWS);
    const file = await h.project.file("people.csv", csv);
    // Slow enough that the kill lands with most of the batches still to send.
    await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: [30, 60] } });
    h.tq = openTestQueues(h.project);

    const first = worker(h.project, "first worker");
    await first.ready;
    const jobId = await h.tq.importFile(file, "faults-import");
    await waitUntil("10 import requests", async () => (await answered(h.emu, "importParticipants")) >= 10, {
      context: first.tail,
    });
    first.kill("SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");
    const sentBeforeKill = await answered(h.emu, "importParticipants");
    expect(sentBeforeKill).toBeLessThan(BATCHES);
    expect(await h.tq.state("imports", jobId)).toBe("active");

    const second = worker(h.project, "second worker");
    await second.ready;
    const job = await waitForCompletion(h.tq, "imports", jobId, { context: second.tail });
    expect((await second.stop()).code, second.tail()).toBe(0);

    const sent = await answered(h.emu, "importParticipants");
    expect(sent).toBeGreaterThanOrEqual(BATCHES);
    expect(sent - BATCHES).toBeLessThanOrEqual(IMPORT_IN_FLIGHT);
    expect(await notExactlyOnce(h.emu, emails)).toEqual([]);
    expect(job.returnvalue).toMatchObject({ rowsRead: ROWS, imported: ROWS, rejected: 0 });
    // The restarted run took the batches the ledger had recorded as done, and did not send them.
    expect(job.returnvalue.batchesResumed).toBeGreaterThanOrEqual(sentBeforeKill - IMPORT_IN_FLIGHT);
    expect(await h.tq.counts("imports")).toMatchObject({ completed: 1, failed: 0 });
  }, 60_000);

  it("finishes an export from its last committed page, every participant once in the warehouse", async () => {
    // More than one checkpoint (5000 rows) in one study, so the killed run leaves a cursor behind; 20 slow pages
    // after it, so the kill lands before the end even when the progress is read late on a busy machine.
    await addParticipants(h.emu, "study_2", "export-kill", 7000);
    const expected = await participantIds(h.emu, "study_2");
    const pages = Math.ceil(expected.length / 100);
    const checkpointPages = 5000 / 100;
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: { "faults-export": exportJob(["study_2"], 100) },
    });
    h.tq = openTestQueues(h.project);
    const tq_ = h.tq;

    // Pages a little slow from the start: unthrottled, the export (a page fetched ahead) can pass the
    // checkpoint and reach its end before the slower pages below are set.
    await h.emu.admin("/faults", { body: { route: "searchParticipants", latencyMs: 30 } });
    const first = worker(h.project, "first worker");
    await first.ready;
    const jobId = await h.tq.exportJob("faults-export");
    await waitUntil(
      "most of the first checkpoint's pages",
      async () => (await answered(h.emu, "searchParticipants")) >= checkpointPages - 5,
      { context: first.tail, intervalMs: 20 },
    );
    // From here each page takes a while: the kill lands after the checkpoint commits and well before the end.
    await h.emu.admin("/faults", { body: { route: "searchParticipants", latencyMs: 400 } });
    await waitUntil(
      "the first checkpoint in the job's progress",
      async () => {
        const progress = (await tq_.job("exports", jobId))?.progress as
          | { resources?: { participants?: { pages: number } } }
          | undefined;
        return (progress?.resources?.participants?.pages ?? 0) >= checkpointPages;
      },
      { context: first.tail, intervalMs: 50 },
    );
    first.kill("SIGKILL");
    await first.exited;
    expect(await h.tq.state("exports", jobId)).toBe("active");
    await h.emu.admin("/faults", { method: "DELETE" });

    const second = worker(h.project, "second worker");
    await second.ready;
    await waitForCompletion(h.tq, "exports", jobId, { context: second.tail });
    expect((await second.stop()).code, second.tail()).toBe(0);

    const warehouse = await readWarehouse(h.project.warehouseFile);
    const ids = warehouse.participants.map((p) => p.participantId);
    expect(ids.length).toBe(expected.length);
    expect(new Set(ids)).toEqual(new Set(expected));
    expect(warehouse.participants.filter((p) => p.deleted)).toEqual([]);
    const runs = warehouse.runs.filter((r) => r.resource === "participants");
    expect(runs.map((r) => r.status)).toEqual(["interrupted", "succeeded"]);
    // The second run began at the cursor the first one committed, not at the first page.
    expect(runs[1]?.pages).toBe(pages - checkpointPages);
    const readTwice = (await answered(h.emu, "searchParticipants")) - pages;
    expect(readTwice).toBeLessThan(checkpointPages);
  }, 60_000);
});

describe("a DuckDB warehouse still open in another process", () => {
  it("delays the export, without spending an attempt, until the file is free", async () => {
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: { "faults-export": exportJob(["study_1"], 10) },
    });
    h.tq = openTestQueues(h.project);
    const tq_ = h.tq;
    // As a run whose lease ran out would still hold it: DuckDB admits one process per file.
    const holder = await DuckDBInstance.create(h.project.warehouseFile);
    let held = true;
    try {
      const w = worker(h.project, "worker");
      await w.ready;
      const jobId = await h.tq.exportJob("faults-export");
      await waitUntil(
        "the export to wait for the warehouse",
        async () => {
          const job = await tq_.job("exports", jobId);
          const message = (job?.progress as { message?: string } | undefined)?.message ?? "";
          if ((await job?.getState()) === "failed")
            throw new GiveUp(`job ${jobId} failed: ${job?.failedReason}`);
          return /^waiting since \S+: the DuckDB file .* is open in another program \(PID \d+, /.test(
            message,
          );
        },
        { context: w.tail },
      );
      holder.closeSync();
      held = false;
      const job = await waitForCompletion(h.tq, "exports", jobId, { context: w.tail });
      expect(job.attemptsMade).toBe(1);
      expect((await w.stop()).code, w.tail()).toBe(0);
    } finally {
      if (held) holder.closeSync();
    }
    const warehouse = await readWarehouse(h.project.warehouseFile);
    expect(new Set(warehouse.participants.map((p) => p.participantId))).toEqual(
      new Set(await participantIds(h.emu, "study_1")),
    );
  }, 60_000);
});

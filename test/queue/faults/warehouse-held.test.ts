import { realpathSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { progressModel } from "../../../src/queue/progress-model.ts";
import { holdDuckDbFile } from "../../helpers/duckdb-holder.ts";
import {
  createProject,
  exportJob,
  faultHarness,
  GiveUp,
  openTestQueues,
  startWorkerProcess,
  waitForFailure,
  waitUntil,
} from "../helpers.ts";

const h = faultHarness();
const NODE = realpathSync(process.execPath);

describe("a queued export whose DuckDB file another program has open", () => {
  it("says so in its progress while it waits, then fails with one line after exports.lockWaitMs", async () => {
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      exports: { lockWaitMs: 4000 },
      jobs: { "faults-export": exportJob(["study_1"], 10) },
    });
    h.tq = openTestQueues(h.project);
    const tq = h.tq;
    const file = h.project.warehouseFile;
    const holder = await holdDuckDbFile(file);
    try {
      const w = startWorkerProcess(h.project, "worker");
      h.workers.push(w);
      await w.ready;
      const jobId = await tq.exportJob("faults-export");

      const waiting = await waitUntil(
        "the wait in the job's progress",
        async () => {
          const job = await tq.job("exports", jobId);
          if ((await job?.getState()) === "failed")
            throw new GiveUp(`job ${jobId} failed: ${job?.failedReason}`);
          const message = (job?.progress as { message?: string } | undefined)?.message;
          return message?.startsWith("waiting since") ? job : undefined;
        },
        { context: w.tail },
      );
      // What the console and `--wait` show of it.
      const shown = progressModel({
        state: await waiting.getState(),
        progress: waiting.progress as never,
        now: Date.now(),
      });
      expect(shown.message).toMatch(
        new RegExp(
          `^waiting since \\S+Z: the DuckDB file ${file} is open in another program \\(PID ${holder.pid}, ${NODE}\\): the export goes on once it is closed there; it tries every 5 s, and gives up at \\S+Z \\(exports\\.lockWaitMs\\)$`,
        ),
      );

      const failed = await waitForFailure(tq, "exports", jobId, "the job to give up", {
        context: w.tail,
        timeoutMs: 30_000,
      });
      expect(failed.failedReason).toBe(
        `warehouse_file_locked: gave up after 4 s of waiting (exports.lockWaitMs): the DuckDB file ${file} is open in another program (PID ${holder.pid}, ${NODE}): close it there, then run the export again (DuckDB lets no other process write a file one has open, even read-only)`,
      );
      expect((failed.stacktrace ?? []).join("\n")).not.toMatch(/^\s+at /m);
      expect((failed.progress as { failure?: unknown }).failure).toMatchObject({
        code: "warehouse_file_locked",
        retryable: false,
        final: true,
      });
      // Its tries while waiting spent no attempt: the give-up is the first and last.
      expect(failed.attemptsMade).toBe(1);
      expect((await w.stop()).code, w.tail()).toBe(0);
    } finally {
      await holder.close();
    }
  }, 60_000);
});

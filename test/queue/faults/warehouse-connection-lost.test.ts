import { describe, expect, it } from "vitest";
import { MID_COPY, stallAt } from "../../helpers/pg-stall.ts";
import { withTestSchema } from "../../helpers/postgres.ts";
import {
  addParticipants,
  createProject,
  exportJob,
  faultHarness,
  openTestQueues,
  participantIds,
  startWorkerProcess,
  waitForCompletion,
  waitForFailure,
} from "../helpers.ts";

const h = faultHarness();

describe("a queued export whose PostgreSQL backend is ended during a COPY", () => {
  it("fails its job with one line and its run marked failed, the worker lives on, and the next job completes it", async () => {
    // Over two checkpoints (5,000 rows each): the second checkpoint's COPY is the one cut.
    await addParticipants(h.emu, "study_1", "copy-lost", 11_000);
    const schema = await withTestSchema();
    const proxy = await stallAt(MID_COPY(2));
    try {
      h.project = await createProject({
        redisUrl: h.redis.url,
        emulator: h.emu,
        warehouse: proxy.through(schema.url),
        // One attempt: the job's own failure is what this test reads; the rerun is a job of its own.
        queue: { attempts: 1 },
        jobs: { "faults-export": exportJob(["study_1"], 100) },
      });
      h.tq = openTestQueues(h.project);
      const tq = h.tq;
      const w = startWorkerProcess(h.project, "worker");
      h.workers.push(w);
      await w.ready;

      const firstId = await tq.exportJob("faults-export");
      await proxy.stalled;
      expect(await proxy.terminate()).toBe(1);
      const failed = await waitForFailure(tq, "exports", firstId, "the job to fail", { context: w.tail });
      expect(failed.failedReason).toMatch(
        /^sink_connection_lost: export \S+ failed: participants: the PostgreSQL warehouse postgres:\/\/\S+ closed the connection during a commit \(read ECONNRESET\): the commit is kept whole or not at all; run the export again, it resumes from its last checkpoint$/,
      );
      expect((failed.stacktrace ?? []).join("\n")).not.toMatch(/^\s+at /m);
      expect((failed.progress as { failure?: unknown }).failure).toMatchObject({
        code: "sink_connection_lost",
        retryable: true,
      });
      expect(w.child.exitCode, w.tail()).toBeNull();
      expect(w.stderr()).not.toContain("Unhandled");
      const runs = async () =>
        (await schema.pool.query("select status, pages from sync_runs order by started_at")).rows;
      expect((await runs()).map((r) => r.status)).toEqual(["failed"]);

      const secondId = await tq.exportJob("faults-export");
      await waitForCompletion(tq, "exports", secondId, { context: w.tail });
      const expected = await participantIds(h.emu, "study_1");
      const ids = (
        await schema.pool.query("select participant_id from participants where _deleted_at is null")
      ).rows.map((r) => r.participant_id as string);
      expect(ids.length).toBe(expected.length);
      expect(new Set(ids)).toEqual(new Set(expected));
      const after = await runs();
      expect(after.map((r) => r.status)).toEqual(["failed", "succeeded"]);
      // It began at the checkpoint the failed run committed.
      expect(Number(after[1]?.pages)).toBe(Math.ceil((expected.length - 5000) / 100));
      expect((await w.stop()).code, w.tail()).toBe(0);
    } finally {
      await proxy.close();
      await schema.cleanup();
    }
  }, 90_000);
});

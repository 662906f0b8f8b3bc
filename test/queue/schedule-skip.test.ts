import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { enqueueExport, exportLockKeys } from "../../src/queue/index.ts";
import {
  createProject,
  exportJob,
  faultHarness,
  openTestQueues,
  startWorkerProcess,
  waitForCompletion,
  waitUntil,
} from "./helpers.ts";

describe("a scheduled export whose streams another run holds", () => {
  const h = faultHarness();

  it("is skipped, not stacked behind it, while a job asked for by hand waits its turn", async () => {
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: { nightly: exportJob(["study_1"]) },
    });
    const [key] = exportLockKeys(h.project.prefix, h.project.config.warehouse.url, ["participants"]);
    const redis = new Redis(h.redis.url);
    try {
      // Another run holds the warehouse, as a long export would.
      await redis.set(key as string, "recruit-sync export --inline on elsewhere pid 1|x", "PX", 60_000);
      h.tq = openTestQueues(h.project);
      const scheduled = await enqueueExport(h.project.config, h.tq.queues, {
        job: "nightly",
        origin: "schedule",
      });
      const byHand = await enqueueExport(h.project.config, h.tq.queues, { job: "nightly", origin: "cli" });
      const worker = startWorkerProcess(h.project);
      h.workers.push(worker);
      await worker.ready;

      const done = await waitForCompletion(h.tq, "exports", scheduled.jobId);
      expect(done.returnvalue).toMatchObject({ kind: "export", status: "skipped" });
      expect((done.returnvalue as { reason: string }).reason).toContain("elsewhere pid 1");
      // The one asked for by hand is not dropped: it waits for the lock, and runs once it is free.
      await waitUntil("the hand-made job to wait for the lock", async () =>
        (await h.tq?.state("exports", byHand.jobId)) === "delayed" ? true : undefined,
      );
      await redis.del(key as string);
      const ran = await waitForCompletion(h.tq, "exports", byHand.jobId);
      expect(ran.returnvalue).toMatchObject({ status: "succeeded" });
    } finally {
      redis.disconnect();
    }
  }, 60_000);
});

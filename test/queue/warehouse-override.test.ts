import { existsSync } from "node:fs";
import path from "node:path";
import type { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { enqueueExport } from "../../src/queue/index.ts";
import {
  createProject,
  exportJob,
  faultHarness,
  openTestQueues,
  startWorkerProcess,
  waitForCompletion,
  waitUntil,
} from "./helpers.ts";

describe("a queued export's warehouse override", () => {
  const h = faultHarness();

  it("is refused from the dashboard unless the definition or the configuration names it; the CLI's goes through", async () => {
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: { nightly: exportJob(["study_1"]) },
    });
    const elsewhere = path.join(h.project.dir, "elsewhere");
    const worker = startWorkerProcess(h.project);
    h.workers.push(worker);
    await worker.ready;
    h.tq = openTestQueues(h.project);
    const queue = h.tq.queues.exports as unknown as Queue;
    const failedFor = async (id: string) =>
      waitUntil(`job ${id} to fail`, async () => {
        const job = await h.tq?.job("exports", id);
        return job && (await job.getState()) === "failed" ? await h.tq?.job("exports", id) : undefined;
      });

    // As bull-board's "Add job" does: data straight onto the queue, with a warehouse of the user's choosing.
    const byHand = { kind: "export", job: "nightly", warehouse: `file:${elsewhere}`, origin: "dashboard" };
    await queue.add("export", byHand, { jobId: "by-hand" });
    await queue.add("export", { ...byHand, warehouseGrant: "0".repeat(64) }, { jobId: "forged-grant" });
    for (const id of ["by-hand", "forged-grant"]) {
      const failed = await failedFor(id);
      expect(failed?.progress).toMatchObject({ failure: { code: "config_invalid", final: true } });
      expect(failed?.failedReason).toContain("named by neither the job definition nor the configuration");
    }
    expect(existsSync(elsewhere)).toBe(false);

    // The definition's own warehouse, named again by hand, is fine.
    await queue.add("export", { ...byHand, warehouse: h.project.config.warehouse.url }, { jobId: "named" });
    await waitForCompletion(h.tq, "exports", "named");

    // What `recruit-sync export --warehouse` enqueues carries a grant made with the token: it goes through.
    const cli = await enqueueExport(h.project.config, h.tq.queues, {
      job: "nightly",
      warehouse: `file:${elsewhere}`,
      origin: "cli",
    });
    const done = await waitForCompletion(h.tq, "exports", cli.jobId);
    expect(done.returnvalue).toMatchObject({ status: "succeeded" });
    expect(existsSync(path.join(elsewhere, "participants"))).toBe(true);
  }, 90_000);
});

import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Job, Queue } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { startOpsServer } from "../../src/ops/index.ts";
import { keptSchedulerName, readInvalidDefinitions } from "../../src/queue/schedulers.ts";
import {
  createProject,
  exportJob,
  faultHarness,
  openTestQueues,
  startWorkerProcess,
  waitUntil,
} from "./helpers.ts";

describe("a typo in a scheduled export's definition", () => {
  const h = faultHarness();

  it("keeps the schedule running with the last valid definition, marked, until the file is mended", async () => {
    const nightly = { ...exportJob(["study_1"]), schedule: { cron: "*/2 * * * * *", timezone: "UTC" } };
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      queue: { reconcileMs: 1000 },
      jobs: { nightly },
    });
    const file = path.join(h.project.dir, "jobs", "nightly.yaml");
    h.tq = openTestQueues(h.project);
    const exportsQueue = h.tq.queues.exports as unknown as Queue;
    const completedNamed = async (name: string, after: number) =>
      (await exportsQueue.getJobs(["completed"], 0, -1)).filter(
        (j: Job) => j.name === name && (j.finishedOn ?? 0) > after,
      );
    const redis = new Redis(h.redis.url);
    try {
      let worker = startWorkerProcess(h.project, "worker 1");
      h.workers.push(worker);
      await worker.ready;
      await waitUntil("a scheduled run", async () => (await completedNamed("export", 0)).length > 0, {
        context: worker.tail,
      });

      // The typo: a resource that does not exist. The next worker start must not remove the schedule.
      await writeFile(file, "name: nightly\nkind: export\nresources: [participant]\nstudies: [study_1]\n");
      expect((await worker.stop()).code).toBe(0);
      const typoAt = Date.now();
      worker = startWorkerProcess(h.project, "worker 2");
      h.workers.push(worker);
      await worker.ready;
      const [scheduler] = await exportsQueue.getJobSchedulers(0, -1);
      expect(scheduler?.key).toBe("schedule-nightly");
      expect(scheduler?.name).toBe(keptSchedulerName(file));
      expect(scheduler?.pattern).toBe("*/2 * * * * *");
      // It still runs, with the definition as it last validated.
      const kept = await waitUntil(
        "a run of the kept schedule",
        async () => {
          const runs = await completedNamed(keptSchedulerName(file), typoAt);
          return runs.length > 0 ? runs : undefined;
        },
        { context: worker.tail },
      );
      expect(kept[0]?.returnvalue).toMatchObject({ status: "succeeded" });
      const invalid = await readInvalidDefinitions(redis, h.project.prefix);
      expect(Object.keys(invalid)).toEqual(["nightly"]);
      expect(invalid.nightly).toMatchObject({ file, scheduleKept: true });
      expect(invalid.nightly?.problems.map((p) => p.path)).toContain("resources.0");
      expect(worker.stderr()).toContain("its schedule keeps running with the last valid definition");
      // Marked where ops look: /readyz degraded (still 200), the metric, the dashboard's job names.
      const ops = await startOpsServer({
        config: { ...h.project.config, ops: { ...h.project.config.ops, auth: false } },
        logger: pino({ level: "silent" }),
        port: 0,
      });
      try {
        const ready = await fetch(`${ops.url}/readyz`);
        expect(ready.status).toBe(200);
        const body = (await ready.json()) as {
          status: string;
          checks: { name: string; state: string; detail: string }[];
        };
        expect(body.status).toBe("degraded");
        const check = body.checks.find((c) => c.name === "job-definitions");
        expect(check?.state).toBe("degraded");
        expect(check?.detail).toContain("nightly.yaml (its schedule runs with the last valid definition)");
        const metrics = await (await fetch(`${ops.url}/metrics`)).text();
        expect(metrics).toMatch(/^recruit_sync_job_definitions_invalid 1$/m);
        const board = (await (await fetch(`${ops.url}/ui/api/queues`)).json()) as {
          queues: { name: string; description?: string }[];
        };
        const exportsBoard = board.queues.find((q) => q.name === "exports");
        expect(exportsBoard?.description).toContain(
          "INVALID in jobs/: nightly.yaml (its schedule runs with the last valid definition)",
        );
      } finally {
        await ops.close();
      }

      // Mended while the worker runs: the periodic reconcile takes the file up again without a restart.
      await writeFile(
        file,
        "name: nightly\nkind: export\nresources: [participants]\nstudies: [study_1]\nschedule: {cron: '*/3 * * * * *', timezone: UTC}\n",
      );
      await waitUntil(
        "the mended schedule",
        async () => (await exportsQueue.getJobSchedulers(0, -1))[0]?.pattern === "*/3 * * * * *",
        { context: worker.tail },
      );
      expect((await exportsQueue.getJobSchedulers(0, -1))[0]?.name).toBe("export");
      expect(await readInvalidDefinitions(redis, h.project.prefix)).toEqual({});
      expect((await worker.stop()).code).toBe(0);
    } finally {
      redis.disconnect();
    }
  }, 90_000);
});

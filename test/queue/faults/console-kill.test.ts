import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { startOpsServer } from "../../../src/ops/index.ts";
import {
  answered,
  createProject,
  faultHarness,
  IMPORT_IN_FLIGHT,
  importJob,
  largePeopleCsv,
  notExactlyOnce,
  openTestQueues,
  startWorkerProcess,
  waitForCompletion,
  waitUntil,
} from "../helpers.ts";

const h = faultHarness();
const CONSOLE = { "x-requested-with": "recruit-sync-console" };

describe("an import run from the console whose worker is SIGKILLed mid-run", () => {
  it("is finished by the next worker: every person once, at most the batches in flight sent twice", async () => {
    const ROWS = 3000;
    const BATCHES = ROWS / 50;
    h.project = await createProject({ redisUrl: h.redis.url, emulator: h.emu, jobs: { crm: importJob(50) } });
    await h.emu.admin("/faults", { body: { route: "*", latencyMs: [30, 60] } });
    h.tq = openTestQueues(h.project);
    const ops = await startOpsServer({
      config: { ...h.project.config, ops: { ...h.project.config.ops, auth: false } },
      logger: pino({ level: "silent" }),
      port: 0,
    });
    try {
      // Over 4 MB: the import reads and maps it on its parse thread when the worker is killed.
      const { csv, emails } = largePeopleCsv("console-kill", ROWS);
      const form = new FormData();
      form.append("file", new Blob([csv], { type: "text/csv" }), "crm-export.csv");
      const uploaded = await fetch(`${ops.url}/api/uploads`, {
        method: "POST",
        headers: CONSOLE,
        body: form,
      });
      expect(uploaded.status).toBe(201);
      const { uploadId } = (await uploaded.json()) as { uploadId: string };

      const first = startWorkerProcess(h.project, "worker 1");
      h.workers.push(first);
      await first.ready;
      const run = await fetch(`${ops.url}/api/uploads/${uploadId}/run`, {
        method: "POST",
        headers: { ...CONSOLE, "content-type": "application/json" },
        body: JSON.stringify({ job: "crm" }),
      });
      expect(run.status).toBe(202);
      const { jobId } = (await run.json()) as { jobId: string };
      await waitUntil("10 import requests", async () => (await answered(h.emu, "importParticipants")) >= 10, {
        context: first.tail,
      });
      first.kill("SIGKILL");
      await first.exited;

      const second = startWorkerProcess(h.project, "worker 2");
      h.workers.push(second);
      await second.ready;
      await waitForCompletion(h.tq, "imports", jobId, { context: second.tail, timeoutMs: 60_000 });
      expect(await notExactlyOnce(h.emu, emails)).toEqual([]);
      const sent = await answered(h.emu, "importParticipants");
      expect(sent).toBeGreaterThanOrEqual(BATCHES);
      expect(sent - BATCHES).toBeLessThanOrEqual(IMPORT_IN_FLIGHT);
      expect((await second.stop()).code).toBe(0);
    } finally {
      await ops.close();
    }
  }, 120_000);
});

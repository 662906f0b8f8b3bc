/**
 * A worker killed with SIGKILL mid-import, and the import resumed by another
 * worker: sync_log holds each person of the file once, under the job's run,
 * on DuckDB and PostgreSQL alike (issue 32).
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { personDigest } from "../../src/imports/index.ts";
import { withTestSchema } from "../helpers/postgres.ts";
import {
  answered,
  createProject,
  faultHarness,
  importJob,
  largePeopleCsv,
  openTestQueues,
  type Project,
  startWorkerProcess,
  type WorkerProcess,
  waitForCompletion,
  waitUntil,
} from "../queue/helpers.ts";
import { readLog } from "./read-log.ts";

const h = faultHarness();

function worker(p: Project, name: string): WorkerProcess {
  const w = startWorkerProcess(p, name);
  h.workers.push(w);
  return w;
}

for (const kind of ["duckdb", "postgres"] as const) {
  describe(`a worker killed mid-import, logging into ${kind}`, () => {
    it("leaves each person once in sync_log after another worker resumes the import", async () => {
      const ROWS = 3000;
      const schema = kind === "postgres" ? await withTestSchema() : undefined;
      try {
        h.project = await createProject({
          redisUrl: h.redis.url,
          emulator: h.emu,
          jobs: { "log-kill": importJob(50) },
          // Parts of 200: the killed worker has loaded some before the kill, which the resume replaces.
          syncLog: { enabled: true, partLines: 200 },
          ...(schema ? { warehouse: schema.url } : {}),
        });
        const url = schema?.url ?? `duckdb:${h.project.warehouseFile}`;
        const { csv, emails } = largePeopleCsv("log-kill", ROWS);
        const file = await h.project.file("people.csv", csv);
        // Slow enough that the kill lands with most of the batches still to send, after the log's thread
        // (DuckDB's library, the tables) is up and has loaded a part, on a loaded machine too.
        await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: [150, 250] } });
        h.tq = openTestQueues(h.project);

        const first = worker(h.project, "first worker");
        await first.ready;
        const jobId = await h.tq.importFile(file, "log-kill");
        await waitUntil(
          "10 import requests",
          async () => (await answered(h.emu, "importParticipants")) >= 10,
          {
            context: first.tail,
          },
        );
        // Some parts of the run's log are in the warehouse before the kill: the resume must replace them.
        const logged = async () =>
          (await readLog(url).catch(() => ({ log: [] }))).log.filter((r) => r.run_id === `log-kill-${jobId}`)
            .length;
        await waitUntil("a part of the log loaded", async () => (await logged()) > 0, {
          context: first.tail,
        });
        first.kill("SIGKILL");
        expect((await first.exited).signal).toBe("SIGKILL");
        expect(await answered(h.emu, "importParticipants")).toBeLessThan(ROWS / 50);
        expect(await logged()).toBeLessThan(ROWS);
        await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: [10, 30] } });

        const second = worker(h.project, "second worker");
        await second.ready;
        const job = await waitForCompletion(h.tq, "imports", jobId, { context: second.tail });
        expect((await second.stop()).code, second.tail()).toBe(0);
        expect(job.returnvalue).toMatchObject({ rowsRead: ROWS, imported: ROWS });
        expect(job.returnvalue.batchesResumed).toBeGreaterThan(0);

        const { log, runs } = await readLog(url);
        const runId = `log-kill-${jobId}`;
        const mine = log.filter((r) => r.run_id === runId);
        const digests = mine.map((r) => String(r.person_digest));
        expect(digests).toHaveLength(ROWS);
        expect(new Set(digests)).toEqual(new Set(emails.map((e) => personDigest("email", e))));
        expect(new Set(mine.map((r) => r.outcome))).toEqual(new Set(["imported"]));
        expect(runs.find((r) => r.runId === runId)?.status).toBe("succeeded");
        // The killed attempt's log files were taken over by the resume, and removed once loaded.
        const left = await readdir(path.join(h.project.dir, "data", "imports"));
        expect(left.filter((f) => /\.sync-log\.\d+\.csv$/.test(f))).toEqual([]);
      } finally {
        await schema?.cleanup();
      }
    }, 90_000);
  });
}

/**
 * Every way in drives one runner: what the inline CLI does to a run, a queued
 * job does too — the same run lock, the same service client, the same cost in
 * Redis per request.
 */
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import { withTestSchema } from "../helpers/postgres.ts";
import {
  addParticipants,
  answered,
  createProject,
  exportJob,
  faultHarness,
  openTestQueues,
  startWorkerProcess,
  waitForCompletion,
  waitUntil,
} from "../queue/helpers.ts";

/**
 * Counts the round trips clients make to Redis, as MONITOR sees them: the
 * commands a Lua script runs inside Redis (INFO commandstats counts those
 * too) are not round trips, and the monitor's own are left out.
 */
async function roundTripCounter(url: string) {
  const conn = new Redis(url);
  const monitor = await conn.monitor();
  let count = 0;
  monitor.on("monitor", (_time: string, _args: string[], source: string) => {
    if (source !== "lua") count++;
  });
  return {
    take(): number {
      const n = count;
      count = 0;
      return n;
    },
    close() {
      monitor.disconnect();
      conn.disconnect();
    },
  };
}

describe("one job runner", () => {
  const h = faultHarness();

  it("never lets two export --inline runs of one stream into one PostgreSQL warehouse overlap", async () => {
    const schema = await withTestSchema();
    try {
      await addParticipants(h.emu, "study_1", "overlap", 1500);
      h.project = await createProject({
        redisUrl: h.redis.url,
        emulator: h.emu,
        jobs: { "study-export": { ...exportJob(["study_1"], 50), sink: schema.url } },
      });
      // Slow pages, so the first run is still at it when the second starts.
      await h.emu.admin("/faults", { method: "POST", body: { route: "searchParticipants", latencyMs: 80 } });
      const args = ["--config", h.project.configDir, "export", "--job", "study-export", "--inline"];
      const options = { env: h.project.env, cwd: h.project.dir };
      const first = runCli(args, options);
      await waitUntil(
        "the first run to read some pages",
        async () => (await answered(h.emu, "searchParticipants")) >= 3,
      );
      const second = await runCli(args, options);
      const firstDone = await first;

      expect(firstDone.stderr).toBe("");
      expect(firstDone.code).toBe(0);
      expect(second.code).toBe(1);
      const lines = second.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/already running \(recruit-sync export --inline on .+ pid \d+\)/);

      const live = await schema.pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM participants WHERE study_id = 'study_1' AND _deleted_at IS NULL",
      );
      const inService = (await h.emu.snapshot()).participants.filter((p) => p.studyId === "study_1").length;
      expect(Number(live.rows[0]?.n)).toBe(inService);
    } finally {
      await schema.cleanup();
    }
  }, 90_000);

  it("fails a queued export whose base URL answers on the wrong path with the inline run's code and line", async () => {
    // Ends with /api/public/v1, so it passes the address check before any request, but leads nowhere.
    const wrongBase = h.emu.baseUrl.replace("/api/public/v1", "/proxy/api/public/v1");
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: { segments: { kind: "export", resources: ["segments"] } },
    });
    const env = { ...h.project.env, RECRUIT_SYNC_BASE_URL: wrongBase };
    const inline = await runCli(
      ["--config", h.project.configDir, "export", "--job", "segments", "--inline", "--report", "report.json"],
      { env, cwd: h.project.dir },
    );
    expect(inline.code).toBe(1);
    const inlineLine = inline.stderr.trim();
    expect(inlineLine).toContain("does not lead to the service");
    const { readFile } = await import("node:fs/promises");
    const inlineReport = JSON.parse(await readFile(`${h.project.dir}/report.json`, "utf8"));
    const inlineCode = inlineReport.resources.segments.errorCode;
    expect(inlineCode).toBe("service_address");

    const worker = startWorkerProcess({ ...h.project, env });
    h.workers.push(worker);
    await worker.ready;
    h.tq = openTestQueues(h.project);
    const id = await h.tq.exportJob("segments");
    const failed = await waitUntil("the queued export to fail", async () => {
      const job = await h.tq?.job("exports", id);
      return job && (await job.getState()) === "failed" ? await h.tq?.job("exports", id) : undefined;
    });
    const failure = (failed?.progress as { failure?: { code: string } } | undefined)?.failure;
    expect(failure?.code).toBe(inlineCode);
    // The same line but for the run's id, which each run has its own of.
    const stoppedAt = (line: string) => line.slice(line.indexOf(" stopped: "));
    expect(stoppedAt(failed?.failedReason ?? "")).toBe(stoppedAt(inlineLine));
  }, 90_000);

  it("costs the worker path no more Redis round trips per service request than the inline path", async () => {
    await addParticipants(h.emu, "study_1", "trips", 10_000);
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: {
        inline: { ...exportJob(["study_1"], 50), sink: "file:./data/inline" },
        queued: { ...exportJob(["study_1"], 50), sink: "file:./data/queued" },
      },
    });
    const trips = await roundTripCounter(h.redis.url);
    try {
      const requestsSoFar = async () => (await h.emu.requests()).total;

      trips.take();
      const before = await requestsSoFar();
      const inline = await runCli(
        ["--config", h.project.configDir, "export", "--job", "inline", "--inline"],
        {
          env: h.project.env,
          cwd: h.project.dir,
        },
      );
      expect(inline.stderr).toBe("");
      const inlineTrips = trips.take();
      const inlineRequests = (await requestsSoFar()) - before;

      const worker = startWorkerProcess(h.project);
      h.workers.push(worker);
      await worker.ready;
      h.tq = openTestQueues(h.project);
      trips.take();
      const start = await requestsSoFar();
      const id = await h.tq.exportJob("queued");
      // Waits on the worker's log, not on Redis, so the test's own polling adds no command to the count.
      await waitUntil("the worker to complete the job", () =>
        worker.stderr().includes(`"jobId":"${id}","msg":"job completed"`),
      );
      const workerTrips = trips.take();
      await waitForCompletion(h.tq, "exports", id);
      const workerRequests = (await requestsSoFar()) - start;

      expect(inlineRequests).toBeGreaterThan(200);
      expect(workerRequests).toBe(inlineRequests);
      const perRequest = { inline: inlineTrips / inlineRequests, worker: workerTrips / workerRequests };
      // A queued job also has its own bookkeeping (taken, progress, lock renewals, finished) that does not
      // grow with its requests: a quarter of a command per request covers it over these 200+ pages.
      expect(perRequest.worker, JSON.stringify({ perRequest, inlineTrips, workerTrips })).toBeLessThanOrEqual(
        perRequest.inline + 0.25,
      );
    } finally {
      trips.close();
    }
  }, 120_000);
});

import type { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { enqueueImport, followJob } from "../../../src/queue/index.ts";
import { runCli } from "../../helpers/cli.ts";
import {
  answered,
  createProject,
  exportJob,
  faultHarness,
  importJob,
  notExactlyOnce,
  openTestQueues,
  peopleCsv,
  startWorkerProcess,
  waitForCompletion,
  waitUntil,
} from "../helpers.ts";

// Nothing on disk: a restart comes back empty, as a Redis without AOF or RDB does.
const h = faultHarness();

const nightly = { ...exportJob(["study_1"]), schedule: { cron: "0 3 * * *", timezone: "UTC" } };

async function schedulerIds(queue: Queue): Promise<string[]> {
  return (await queue.getJobSchedulers(0, -1)).map((s) => s.key);
}

describe("Redis restarted without persistence", () => {
  it("is said at error level; the running import is enqueued again and ends with everyone, the schedule comes back", async () => {
    const ROWS = 3000;
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      queue: { lockMs: 30_000, heartbeatMs: 500 },
      jobs: { crm: importJob(50), nightly },
    });
    const { csv, emails } = peopleCsv("lost", ROWS);
    const file = await h.project.file("people.csv", csv);
    await h.emu.admin("/faults", { body: { route: "*", latencyMs: [30, 60] } });
    h.tq = openTestQueues(h.project);
    const worker = startWorkerProcess(h.project);
    h.workers.push(worker);
    await worker.ready;
    const exportsQueue = h.tq.queues.exports as unknown as Queue;
    expect(await schedulerIds(exportsQueue)).toEqual(["schedule-nightly"]);

    const jobId = await h.tq.importFile(file, "crm");
    await waitUntil("10 import requests", async () => (await answered(h.emu, "importParticipants")) >= 10, {
      context: worker.tail,
    });
    await h.redis.stop();
    await h.redis.start();

    // The job Redis lost comes back from the worker's copy and runs to its end: nobody is left out.
    await waitUntil("the job enqueued again", async () => (await h.tq?.job("imports", jobId)) ?? false, {
      context: worker.tail,
    });
    await waitForCompletion(h.tq, "imports", jobId, { context: worker.tail, timeoutMs: 60_000 });
    expect(await notExactlyOnce(h.emu, emails)).toEqual([]);
    // Without a worker restart.
    await waitUntil("the schedule back", async () => (await schedulerIds(exportsQueue)).length === 1);
    expect(await schedulerIds(exportsQueue)).toEqual(["schedule-nightly"]);

    const logs = worker.stderr();
    const lines = logs.split("\n").filter((l) => l.startsWith("{"));
    const said = lines.map((l) => JSON.parse(l) as { level: number; msg: string; code?: string });
    expect(said.some((l) => l.level === 50 && l.msg.startsWith("Redis lost its data"))).toBe(true);
    expect(said.some((l) => l.level === 50 && l.code === "job_lost" && l.msg.startsWith("job lost"))).toBe(
      true,
    );
    expect(logs).toContain("appendonly yes");
    // No line promises a resume from a checkpoint Redis no longer holds.
    expect(logs).not.toContain("resumes from its checkpoint");
    expect((await worker.stop()).code).toBe(0);
  }, 120_000);

  it("ends import --wait with exit 1 and a line saying the job was lost with Redis's data", async () => {
    h.project = await createProject({ redisUrl: h.redis.url, emulator: h.emu, jobs: { crm: importJob(50) } });
    const file = await h.project.file("people.csv", peopleCsv("lost-wait", 20).csv);
    // No worker: the job only waits, so nobody holds a copy of it when Redis comes back empty.
    const waiting = runCli(["--config", h.project.configDir, "import", file, "--job", "crm", "--wait"], {
      env: h.project.env,
      cwd: h.project.dir,
      timeoutMs: 90_000,
    });
    h.tq = openTestQueues(h.project);
    await waitUntil("the job queued", async () => (await h.tq?.counts("imports"))?.prioritized === 1);
    await h.redis.stop();
    await h.redis.start();
    const r = await waiting;
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("was lost with Redis's data");
    expect(r.stderr).toContain("appendonly yes");
    expect(r.stderr).not.toContain("removed, or another prefix");
  }, 120_000);

  it("tells a job lost before its follower started from a removed one (the --wait race)", async () => {
    h.project = await createProject({ redisUrl: h.redis.url, emulator: h.emu, jobs: { crm: importJob(50) } });
    const file = await h.project.file("people.csv", peopleCsv("lost-early", 5).csv);
    h.tq = openTestQueues(h.project);
    const enqueued = await enqueueImport(
      h.project.config,
      h.tq.queues,
      { file, job: "crm", origin: "cli" },
      { givenAtShell: true },
    );
    // Redis loses its data between the add and the first look of whoever follows the job.
    await h.redis.stop();
    await h.redis.start();
    const following = followJob(h.tq.queues.imports as unknown as Queue, enqueued.jobId, () => {}, {
      epoch: enqueued.epoch,
    });
    await expect(following).rejects.toMatchObject({ code: "job_lost" });
  }, 60_000);
});

describe("a fleet under one prefix", () => {
  it("refuses, with one line, a worker whose token differs from the running workers'", async () => {
    h.project = await createProject({ redisUrl: h.redis.url, emulator: h.emu, jobs: { crm: importJob(50) } });
    const first = startWorkerProcess(h.project, "worker 1");
    h.workers.push(first);
    await first.ready;
    const other = startWorkerProcess(
      { ...h.project, env: { ...h.project.env, RECRUIT_SYNC_API_TOKEN: "another-token-entirely" } },
      "worker 2",
    );
    h.workers.push(other);
    const end = await other.exited;
    expect(end.code, other.tail()).toBe(2);
    const said = other.stderr().trim();
    expect(said).toContain("uses another API token");
    expect(said).toContain(h.project.prefix);
    // Never the token itself, neither the running fleet's nor its own.
    expect(said).not.toContain(h.emu.token);
    expect(said).not.toContain("another-token-entirely");
    // A worker with the same settings joins.
    const second = startWorkerProcess(h.project, "worker 3");
    h.workers.push(second);
    await second.ready;
    for (const w of [first, second]) expect((await w.stop()).code).toBe(0);
    // Once the fleet stopped, a fleet with another token may start (a token rotated while all were down).
    const rotated = startWorkerProcess(
      { ...h.project, env: { ...h.project.env, RECRUIT_SYNC_API_TOKEN: "another-token-entirely" } },
      "worker 4",
    );
    h.workers.push(rotated);
    await rotated.ready;
  }, 60_000);
});

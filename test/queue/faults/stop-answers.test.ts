import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.ts";
import {
  answered,
  createProject,
  faultHarness,
  importJob,
  notExactlyOnce,
  openTestQueues,
  peopleCsv,
  ROOT,
  startWorkerProcess,
  waitForCompletion,
  waitUntil,
} from "../helpers.ts";

// A stop in the middle of an import, with answers 200–500 ms late: several requests are on the wire
// when the signal comes. Their answers are waited for and recorded, so the resume sends none again.
const h = faultHarness();
const ROWS = 2000;
const BATCH = 50;
const BATCHES = ROWS / BATCH;
const IN_FLIGHT = 6;
const CLI = path.join(ROOT, "bin/recruit-sync.mjs");

async function setUp(tag: string) {
  h.project = await createProject({
    redisUrl: h.redis.url,
    emulator: h.emu,
    imports: { concurrency: IN_FLIGHT },
    jobs: { "faults-import": importJob(BATCH) },
  });
  const { csv, emails } = peopleCsv(tag, ROWS);
  const file = await h.project.file("people.csv", csv);
  await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: [200, 500] } });
  await h.emu.admin("/requests", { method: "DELETE" });
  const importsBefore = (await h.emu.snapshot()).imports.length;
  return { file, emails, importsBefore };
}

/** Every person went out in exactly one answered request: no answered batch was sent again. */
async function expectEachPersonSentOnce(emails: readonly string[], importsBefore: number) {
  const imports = (await h.emu.snapshot()).imports.slice(importsBefore);
  expect(imports.reduce((n, i) => n + i.count, 0)).toBe(ROWS);
  expect(imports).toHaveLength(BATCHES);
  expect(await answered(h.emu, "importParticipants")).toBe(BATCHES);
  expect(await notExactlyOnce(h.emu, emails)).toEqual([]);
}

describe("a stop in the middle of an import waits for the answers already on their way", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal} to a worker: the restarted worker sends no batch the service had answered`, async () => {
      const { file, emails, importsBefore } = await setUp(signal.toLowerCase());
      h.tq = openTestQueues(h.project as NonNullable<typeof h.project>);
      const first = startWorkerProcess(h.project as NonNullable<typeof h.project>, "first worker");
      h.workers.push(first);
      await first.ready;
      const jobId = await h.tq.importFile(file, "faults-import");
      await waitUntil("4 import answers", async () => (await answered(h.emu, "importParticipants")) >= 4, {
        context: first.tail,
      });
      first.kill(signal);
      expect(await first.exited, first.tail()).toEqual({ code: 0, signal: null });
      // Requests were on the wire when the signal came, and the run waited for them.
      expect(first.stderr()).toMatch(/"waiting":[1-9]\d*[^\n]*"msg":"stopping: waiting for the answers/);
      expect(first.stderr()).toContain("job interrupted by shutdown");
      expect(await answered(h.emu, "importParticipants")).toBeLessThan(BATCHES);

      const second = startWorkerProcess(h.project as NonNullable<typeof h.project>, "second worker");
      h.workers.push(second);
      await second.ready;
      const job = await waitForCompletion(h.tq, "imports", jobId, { context: second.tail });
      expect((await second.stop()).code, second.tail()).toBe(0);
      expect(job.returnvalue).toMatchObject({ rowsRead: ROWS, imported: ROWS, rejected: 0 });
      await expectEachPersonSentOnce(emails, importsBefore);
    }, 60_000);
  }

  it("gives up on answers later than the shutdown allows: the worker still stops clean, the job back in the queue", async () => {
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      imports: { concurrency: IN_FLIGHT },
      queue: { shutdownDeadlineMs: 3000 },
      jobs: { "faults-import": importJob(BATCH) },
    });
    const file = await h.project.file("people.csv", peopleCsv("late", ROWS).csv);
    // Answers that would come long after the deadline.
    await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: 20_000 } });
    h.tq = openTestQueues(h.project);
    const worker = startWorkerProcess(h.project, "worker");
    h.workers.push(worker);
    await worker.ready;
    const jobId = await h.tq.importFile(file, "faults-import");
    await waitUntil(
      "the import to start",
      () => worker.stderr().includes('"msg":"import started"') || undefined,
      {
        context: worker.tail,
      },
    );
    // The file is read in a moment and its first request goes out; the emulator holds it.
    await new Promise((r) => setTimeout(r, 1000));
    worker.kill("SIGTERM");
    expect(await worker.exited, worker.tail()).toEqual({ code: 0, signal: null });
    expect(worker.stderr()).toMatch(/"waiting":[1-9]\d*[^\n]*"msg":"stopping: waiting for the answers/);
    expect(worker.stderr()).toMatch(/"clean":true[^\n]*"msg":"worker stopped"/);
    expect(["delayed", "wait", "prioritized"]).toContain(await h.tq.state("imports", jobId));
    expect((await h.tq.job("imports", jobId))?.attemptsMade).toBe(0);
  }, 60_000);

  it("Ctrl-C to import --inline: the rerun sends no batch the service had answered", async () => {
    const { file, emails, importsBefore } = await setUp("inline");
    const project = h.project as NonNullable<typeof h.project>;
    const args = ["--config", project.configDir, "import", "--inline", "--job", "faults-import", file];
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: project.dir,
      env: project.env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      await waitUntil("4 import answers", async () => (await answered(h.emu, "importParticipants")) >= 4, {
        context: () => stderr,
      });
      child.kill("SIGINT");
      const code = await exited;
      expect(code, stderr).not.toBe(0);
      expect(stderr).toContain("waiting for the answers of requests already sent");
      expect(stderr).toContain("interrupted");
      expect(await answered(h.emu, "importParticipants")).toBeLessThan(BATCHES);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }

    const rerun = await runCli(args, { cwd: project.dir, env: project.env, timeoutMs: 45_000 });
    expect(rerun.code, rerun.stderr).toBe(0);
    await expectEachPersonSentOnce(emails, importsBefore);
  }, 60_000);
});

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { followJob, type RunningWorker, startWorker } from "../../src/queue/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { AUTH, call, type OpsProject, withOpsProject } from "./ops-fixture.ts";

/** A line of a V8 stack trace: "    at fn (file:line:col)". */
const STACK_FRAME = /^\s+at /m;

type BoardJob = { job: { id: string; failedReason: string; stacktrace: string[] } };

describe("what a failed job keeps for the dashboard", () => {
  let emu: TestEmulator;
  let project: OpsProject;
  let worker: RunningWorker;
  let ops: OpsServer;

  beforeAll(async () => {
    emu = await startTestEmulator();
    project = await withOpsProject({
      baseUrl: emu.baseUrl,
      token: emu.token,
      // A database that does not exist: the export fails deep in the PostgreSQL driver.
      warehouse: `postgres://postgres@127.0.0.1:5432/recruit_sync_missing_${randomUUID().replaceAll("-", "")}`,
    });
    project.config.log.level = "debug";
    worker = await startWorker({
      config: project.config,
      logger: project.logger.child({}, { level: "debug" }),
      schedules: false,
      watch: false,
    });
    ops = await startOpsServer({ config: project.config, logger: project.logger, queues: worker.queues });
  });
  afterAll(async () => {
    await ops?.close();
    await worker?.stop();
    await emu?.close();
    await project?.cleanup();
  });

  it("keeps the one-line message of an export into a missing database, no stack frames", async () => {
    const res = await call(`${ops.url}/api/jobs/nightly-export/run`, { headers: AUTH, body: {} });
    expect(res.status, res.text).toBe(202);
    const { jobId } = res.body as { jobId: string };
    const end = await followJob(worker.queues.exports, jobId, () => {});
    expect(end.state).toBe("failed");

    const job = await worker.queues.exports.getJob(jobId);
    expect(job?.failedReason).toMatch(/does not exist/);
    expect(job?.failedReason).not.toContain("\n");
    expect(job?.stacktrace?.length).toBeGreaterThan(0);
    for (const trace of job?.stacktrace ?? []) {
      expect(trace).not.toMatch(STACK_FRAME);
      expect(trace.split("\n")).toHaveLength(1);
    }

    // What the dashboard shows: bull-board's job JSON.
    const board = await call(`${ops.url}/ui/api/queues/exports/${jobId}`, { headers: AUTH });
    expect(board.status, board.text).toBe(200);
    const shown = (board.body as BoardJob).job;
    expect(shown.failedReason).toBe(job?.failedReason);
    expect(shown.stacktrace.join("\n")).not.toMatch(STACK_FRAME);
    expect(board.text).not.toMatch(/\\n\s+at /);

    // The stack is still there for whoever reads the log at debug level.
    const debug = project
      .logText()
      .split("\n")
      .filter((l) => l.includes('"level":20') && l.includes(jobId) && l.includes("stack"));
    expect(debug.join("\n")).toMatch(/\\n\s+at /);
  });

  it("keeps the one-line message of job data the worker refuses, no stack frames", async () => {
    // What a hand-written job (a script, an older version) may hold: no file.
    const job = await worker.queues.imports.add("bad", { kind: "import", origin: "cli" } as never);
    const end = await followJob(worker.queues.imports, job.id as string, () => {});
    expect(end.state).toBe("failed");
    const stored = await worker.queues.imports.getJob(job.id as string);
    expect(stored?.failedReason).toMatch(/^invalid job data: /);
    expect(stored?.stacktrace?.join("\n")).not.toMatch(STACK_FRAME);

    const board = await call(`${ops.url}/ui/api/queues/imports/${job.id}`, { headers: AUTH });
    expect((board.body as BoardJob).job.stacktrace.join("\n")).not.toMatch(STACK_FRAME);
  });
});

import { copyFile, mkdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { followJob, type RunningWorker, startWorker } from "../../src/queue/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { AUTH, call, type OpsProject, SAMPLES, withOpsProject } from "./ops-fixture.ts";

/** Samples of the Prometheus text format: `name{a="b",…} value`. */
function parseMetrics(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  return text
    .split("\n")
    .filter((l) => l && !l.startsWith("#"))
    .map((line) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!m) throw new Error(`not a sample: ${line}`);
      const labels = Object.fromEntries(
        [...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]),
      );
      return { name: m[1] as string, labels, value: Number(m[3]) };
    });
}

describe("metrics and runs while a worker does real work", () => {
  let emu: TestEmulator;
  let project: OpsProject;
  let worker: RunningWorker;
  let ops: OpsServer;

  async function scrape() {
    const res = await call(`${ops.url}/metrics`, { headers: AUTH });
    expect(res.status).toBe(200);
    const samples = parseMetrics(res.text);
    return (name: string, labels: Record<string, string> = {}) =>
      samples
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((sum, s) => sum + s.value, 0);
  }

  async function trigger(
    job: string,
    body: unknown,
  ): Promise<{ jobId: string; queue: "imports" | "exports" }> {
    const res = await call(`${ops.url}/api/jobs/${job}/run`, { headers: AUTH, body });
    expect(res.status, res.text).toBe(202);
    return res.body as { jobId: string; queue: "imports" | "exports" };
  }

  beforeAll(async () => {
    // 4 requests a second, 2 of them kept back as headroom: the nightly export's 9 requests must wait on the budget.
    emu = await startTestEmulator({ rateLimit: "4/1s" });
    project = await withOpsProject({ baseUrl: emu.baseUrl, token: emu.token });
    worker = await startWorker({
      config: project.config,
      logger: project.logger,
      schedules: false,
      watch: false,
    });
    ops = await startOpsServer({ config: project.config, logger: project.logger, queues: worker.queues });
    await ops.metricsReady;
  });
  afterAll(async () => {
    await ops?.close();
    await worker?.stop();
    await emu?.close();
    await project?.cleanup();
  });

  it("counts an export's rows by table, the service's answers and 429s, the budget waits and the job's duration", async () => {
    const atStart = await scrape();
    expect(atStart("recruit_sync_rows_exported_total")).toBe(0);
    // The first request is answered 429: the client waits out Retry-After and asks again.
    const fault = await emu.admin("/faults", { body: { route: "*", tooManyRequestsRate: 1, count: 1 } });
    expect(fault.status).toBe(200);

    const { jobId } = await trigger("nightly-export", {});
    const end = await followJob(worker.queues.exports, jobId, () => {});
    expect(end.state, end.failedReason).toBe("completed");
    const report = end.returnvalue as { resources: Record<string, { rows: number; requests: number }> };
    expect(report.resources.segments?.rows).toBeGreaterThan(0);
    expect(report.resources.participants?.rows).toBeGreaterThan(0);
    expect(report.resources.email_messages?.rows).toBeGreaterThan(0);

    await vi.waitFor(async () => {
      const m = await scrape();
      expect(m("recruit_sync_job_duration_seconds_count", { queue: "exports", outcome: "completed" })).toBe(
        1,
      );
    });
    const atEnd = await scrape();
    expect(atEnd("recruit_sync_rows_exported_total", { table: "segments" })).toBe(
      report.resources.segments?.rows,
    );
    expect(atEnd("recruit_sync_rows_exported_total", { table: "participants" })).toBe(
      report.resources.participants?.rows,
    );
    expect(atEnd("recruit_sync_rows_exported_total", { table: "email_messages" })).toBe(
      report.resources.email_messages?.rows,
    );
    const served = await emu.requests();
    const okAnswers = served.byStatus["200"] ?? 0;
    expect(okAnswers).toBe(Object.values(report.resources).reduce((n, r) => n + r.requests, 0));
    expect(okAnswers).toBeGreaterThan(4);
    expect(atEnd("recruit_sync_requests_total", { status: "200" })).toBe(okAnswers);
    expect(atEnd("recruit_sync_requests_total", { status: "429" })).toBe(1);
    expect(atEnd("recruit_sync_rate_limited_total")).toBe(1);
    expect(atStart("recruit_sync_budget_waits_total")).toBe(0);
    expect(atEnd("recruit_sync_budget_waits_total")).toBeGreaterThan(0);
    expect(atEnd("recruit_sync_budget_wait_seconds_total")).toBeGreaterThan(0);
    expect(atEnd("recruit_sync_queue_jobs", { queue: "exports", state: "completed" })).toBe(1);
  });

  it("counts an import's rows imported and rejected by job definition", async () => {
    await mkdir(project.incoming, { recursive: true });
    const file = path.join(project.incoming, "hubspot-contacts.csv");
    await copyFile(path.join(SAMPLES, "hubspot-contacts.csv"), file);
    const { jobId } = await trigger("hubspot-contacts", { file });
    const end = await followJob(worker.queues.imports, jobId, () => {});
    expect(end.state, end.failedReason).toBe("completed");
    const report = end.returnvalue as { imported: number; rejected: number; rejectsFile: string | null };
    expect(report.imported).toBeGreaterThan(0);
    expect(report.rejected).toBeGreaterThan(0);

    await vi.waitFor(async () => {
      const m = await scrape();
      expect(m("recruit_sync_job_duration_seconds_count", { queue: "imports", outcome: "completed" })).toBe(
        1,
      );
    });
    const atEnd = await scrape();
    expect(atEnd("recruit_sync_rows_imported_total", { job: "hubspot-contacts" })).toBe(report.imported);
    expect(atEnd("recruit_sync_rows_rejected_total", { job: "hubspot-contacts" })).toBe(report.rejected);
    expect(atEnd("recruit_sync_requests_total", { operation: "importParticipants" })).toBeGreaterThan(0);
  });

  it("lists recent runs with their reports, rejects paths and failures", async () => {
    await mkdir(project.incoming, { recursive: true });
    const file = path.join(project.incoming, "no-email.csv");
    await writeFile(file, "Name,City\nAda,London\n");
    const { jobId } = await trigger("hubspot-contacts", { file });
    const end = await followJob(worker.queues.imports, jobId, () => {});
    expect(end.state).toBe("failed");
    await vi.waitFor(async () => {
      const m = await scrape();
      expect(m("recruit_sync_job_duration_seconds_count", { queue: "imports", outcome: "failed" })).toBe(1);
    });

    const res = await call(`${ops.url}/api/runs`, { headers: AUTH });
    expect(res.status).toBe(200);
    type Run = {
      queue: string;
      id: string;
      state: string;
      report: Record<string, unknown> | null;
      rejectsFile: string | null;
      failure: { code: string; final: boolean; message: string } | null;
      durationMs: number;
      data: { origin: string };
    };
    const runs = (res.body as { runs: Run[] }).runs;
    expect(runs.map((r) => `${r.queue}:${r.state}`)).toEqual([
      "imports:failed",
      "imports:completed",
      "exports:completed",
    ]);
    const [failed, imported, exported] = runs as [Run, Run, Run];
    expect(failed.id).toBe(jobId);
    expect(failed.failure).toMatchObject({ code: "file_missing_column", final: true });
    expect(imported.rejectsFile).toBe(imported.report?.rejectsFile);
    expect((await stat(imported.rejectsFile as string)).isFile()).toBe(true);
    expect(exported.report?.resources).toHaveProperty("segments");
    expect(exported.failure).toBeNull();
    for (const run of runs) expect(run.data.origin).toBe("ops-api");

    const onlyFailed = await call(`${ops.url}/api/runs?state=failed&queue=imports&limit=5`, {
      headers: AUTH,
    });
    expect((onlyFailed.body as { runs: Run[] }).runs.map((r) => r.id)).toEqual([jobId]);
  });

  it("shows the shared budget the workers learned from the service's headers", async () => {
    const res = await call(`${ops.url}/api/governor`, { headers: AUTH });
    expect(res.status).toBe(200);
    const { budget } = res.body as { budget: { limit: number; remaining: number; resetAt: string } };
    expect(budget.limit).toBe(4);
    expect(budget.remaining).toBeGreaterThanOrEqual(0);
    expect(Number.isNaN(Date.parse(budget.resetAt))).toBe(false);
  });
});

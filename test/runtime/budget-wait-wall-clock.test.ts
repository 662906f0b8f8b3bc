/**
 * "Waited on the rate budget" is wall-clock time: requests in flight together
 * wait together, so what a run reports waiting can never exceed how long it ran.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImportReport } from "../../src/imports/index.ts";
import { runImportJob } from "../../src/runtime/run-import-job.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type TestProject, testProject } from "../queue/runtime-fixture.ts";

describe("time waited on the rate budget by an import with requests in flight together", () => {
  let emu: TestEmulator;
  let project: TestProject;
  let jobsDir: string;

  beforeAll(async () => {
    emu = await startTestEmulator();
    jobsDir = await mkdtemp(path.join(os.tmpdir(), "recruit-sync-wall-clock-"));
    await writeFile(
      path.join(jobsDir, "study4-people.yaml"),
      [
        "kind: import",
        "target: { studyId: study_4 }",
        "batchSize: 100",
        "columns:",
        "  - { column: Email, to: email }",
        "  - { column: Name, to: firstName }",
      ].join("\n"),
    );
    project = await testProject({
      baseUrl: emu.baseUrl,
      token: emu.token,
      jobsDir,
      yaml: "imports: { concurrency: 2, concurrencyUnderQuota: 6 }",
    });
  });
  afterAll(async () => {
    await project?.cleanup();
    await emu?.close();
    if (jobsDir) await rm(jobsDir, { recursive: true, force: true });
  });

  it("reports no more waiting than the run's duration, though its requests waited at once", async () => {
    // 12 requests against 3 a 1 s window, answered 100 ms late: up to six requests wait for each reset together.
    await emu.admin("/rate-limit", { body: { requests: 3, windowSeconds: 1 } });
    await emu.admin("/faults", { body: { route: "importParticipants", latencyMs: 100 } });
    const file = path.join(project.dir, "people.csv");
    await mkdir(project.dir, { recursive: true });
    const rows = Array.from({ length: 1200 }, (_, i) => `wall.${i}@example.org,Person ${i}`);
    await writeFile(file, `Email,Name\n${rows.join("\n")}\n`);
    const heard: number[] = [];
    const started = Date.now();
    const outcome = await runImportJob(
      { file, given: { by: "shell" }, job: "study4-people", runId: "wall-clock" },
      {
        config: project.config,
        holder: "budget-wait-wall-clock test",
        onBudgetWait: (ms) => heard.push(ms),
      },
    );
    const elapsed = Date.now() - started;
    const report = outcome.report as ImportReport;
    expect(report).toMatchObject({ imported: 1200, requests: 12 });
    // Requests did wait, several at a time: their waits add up to more than the run lasted.
    const summed = heard.reduce((a, b) => a + b, 0);
    expect(outcome.budgetWaitMs).toBeGreaterThan(0);
    expect(summed).toBeGreaterThan(report.durationMs);
    expect(outcome.budgetWaitMs).toBeLessThanOrEqual(report.durationMs);
    expect(outcome.budgetWaitMs).toBeLessThanOrEqual(elapsed);
  }, 60_000);
});

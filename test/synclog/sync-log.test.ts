/**
 * Every import run leaves its sync_runs row and one sync_log row per person
 * in the warehouse, whose counts agree with the run's report — on DuckDB and
 * PostgreSQL alike.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RuntimeConfig } from "../../src/config/index.ts";
import { personDigest } from "../../src/imports/index.ts";
import { runImportJob } from "../../src/runtime/run-import-job.ts";
import { purgeSyncLog } from "../../src/synclog/purge.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { withTestSchema } from "../helpers/postgres.ts";
import { type TestProject, testProject } from "../queue/runtime-fixture.ts";
import { readLog } from "./read-log.ts";

let emu: TestEmulator;
let project: TestProject;
let jobsDir: string;

beforeAll(async () => {
  emu = await startTestEmulator();
  jobsDir = path.join((await import("node:os")).tmpdir(), `sync-log-jobs-${process.pid}-${Date.now()}`);
  await mkdir(jobsDir, { recursive: true });
  await writeFile(
    path.join(jobsDir, "log-people.yaml"),
    [
      "kind: import",
      "target: { studyId: study_1 }",
      "batchSize: 50",
      "columns:",
      "  - { column: Email, to: email }",
      "  - { column: Name, to: firstName }",
    ].join("\n"),
  );
  await writeFile(path.join(jobsDir, "log-opt-out.yaml"), "kind: opt-out\n");
  project = await testProject({
    baseUrl: emu.baseUrl,
    token: emu.token,
    jobsDir,
    yaml: "syncLog: { enabled: true }",
  });
});
afterAll(async () => {
  await project?.cleanup();
  await emu?.close();
  await rm(jobsDir, { recursive: true, force: true });
});

/** 230 rows: 200 people, 20 of them twice (merged), and 10 rows that fail validation. */
async function writeFileOf(name: string): Promise<string> {
  const rows: string[] = [];
  for (let i = 0; i < 200; i++) rows.push(`${name}.${i}@example.org,Person ${i}`);
  for (let i = 0; i < 20; i++) rows.push(`${name}.${i}@example.org,Again ${i}`);
  for (let i = 0; i < 10; i++) rows.push(`not-an-email-${i},Nobody`);
  const file = path.join(project.dir, `${name}.csv`);
  await writeFile(file, `Email,Name\n${rows.join("\n")}\n`);
  return file;
}

const isRow = (r: Record<string, unknown>) => String(r.person_digest).startsWith("row:");

/**
 * syncLog.partLines: the log in one part loaded at the end, or in parts of
 * 37 loaded as the run goes, a batch of 50 straddling two parts and a merged
 * person's later line in a later part than their first.
 */
const PARTS = [
  { what: "in one part", partLines: undefined },
  { what: "in parts of 37 lines", partLines: 37 },
] as const;

for (const kind of ["duckdb", "postgres", "file"] as const) {
  describe.each(PARTS)(`the run's log in a ${kind} warehouse, $what`, ({ partLines }) => {
    it("holds one row per person, with counts that agree with the report, and the run's sync_runs row", async () => {
      const schema = kind === "postgres" ? await withTestSchema() : undefined;
      const url =
        schema?.url ??
        (kind === "file"
          ? `file:${path.join(project.dir, `lake-${Date.now()}`)}`
          : `duckdb:${path.join(project.dir, `log-${Date.now()}.duckdb`)}`);
      const config: RuntimeConfig = {
        ...project.config,
        warehouse: { url },
        syncLog: { ...project.config.syncLog, ...(partLines ? { partLines } : {}) },
      };
      try {
        const name = `log-${kind}-${partLines ?? "whole"}`;
        const file = await writeFileOf(name);
        const { report } = await runImportJob(
          { file, given: { by: "shell" }, job: "log-people", runId: `r-${name}` },
          { config, holder: "sync-log test" },
        );
        if (report.kind !== "import") throw new Error("not an import");
        expect([report.imported, report.duplicates, report.rejected]).toEqual([200, 20, 10]);

        const { log, runs } = await readLog(url);
        const runId = `log-people-r-${name}`;
        const logged = log.filter((r) => r.run_id === runId);
        const mine = logged.filter((r) => !isRow(r));
        expect(mine).toHaveLength(200);
        // The rows refused while reading: no person, each named by its row, with its codes.
        const refused = logged.filter(isRow);
        expect(refused).toHaveLength(report.rejected);
        expect(new Set(refused.map((r) => r.outcome))).toEqual(new Set(["rejected"]));
        expect(refused.map((r) => `row:${(r.source_rows as number[])[0]}`).sort()).toEqual(
          refused.map((r) => r.person_digest).sort(),
        );
        const codes = Object.keys(report.rejectedByCode).sort();
        expect([...new Set(refused.flatMap((r) => String(r.codes).split(";")))].sort()).toEqual(codes);
        expect(mine.filter((r) => r.outcome === "imported")).toHaveLength(report.imported);
        const merged = mine.reduce((n, r) => n + (r.source_rows as number[]).length - 1, 0);
        expect(merged).toBe(report.duplicates);
        const ids = new Set(mine.map((r) => r.import_id));
        expect([...ids].sort()).toEqual([...report.importIds].sort());
        expect(new Set(mine.map((r) => r.verification))).toEqual(new Set(["unchecked"]));
        // A digest, never the address itself.
        const digest = personDigest("email", `${name}.7@example.org`);
        expect(mine.some((r) => r.person_digest === digest)).toBe(true);
        expect(JSON.stringify(mine)).not.toContain("@example.org");

        const run = runs.find((r) => r.runId === runId);
        expect(run).toMatchObject({
          resource: "import",
          kind: "import",
          job: "log-people",
          status: "succeeded",
          fileHash: report.fileHash,
          failureCode: null,
        });
        expect(run?.counts).toMatchObject({ imported: 200, duplicates: 20, rejected: 10, rowsRead: 230 });

        // Run again under another id: the same people, unchanged, logged once more for that run.
        const again = await runImportJob(
          { file, given: { by: "shell" }, job: "log-people", runId: `r2-${name}`, force: true },
          { config, holder: "sync-log test" },
        );
        if (again.report.kind !== "import") throw new Error("not an import");
        const second = (await readLog(url)).log.filter(
          (r) => r.run_id === `log-people-r2-${name}` && !isRow(r),
        );
        expect(second).toHaveLength(200);
        expect(second.filter((r) => r.outcome === "unchanged")).toHaveLength(again.report.unchanged);
        expect(second.filter((r) => r.outcome === "imported")).toHaveLength(again.report.imported);

        // The purge removes what is older than the cut-off, and only that.
        const cutoff = new Date(Date.now() + 60_000);
        expect(await purgeSyncLog(url, new Date(Date.now() - 86_400_000))).toBe(0);
        expect(await purgeSyncLog(url, cutoff)).toBe(420);
        expect((await readLog(url)).log).toHaveLength(0);
      } finally {
        await schema?.cleanup();
      }
    });
  });
}

describe("an opt-out list's run", () => {
  it("logs each person it opted out, and each row refused, reading or by the service, with its code", async () => {
    const url = `duckdb:${path.join(project.dir, `opt-out-${Date.now()}.duckdb`)}`;
    const config: RuntimeConfig = { ...project.config, warehouse: { url } };
    const file = await writeFileOf("opt-known");
    const run = (name: string, job: string) =>
      runImportJob(
        { file: name, given: { by: "shell" }, job, runId: "o" },
        { config, holder: "sync-log test" },
      );
    await run(file, "log-people");
    const list = path.join(project.dir, "opt-out.csv");
    const emails = ["Opt-Known.1@example.org", "opt-known.2@example.org", "opt-known.2@example.org"];
    await writeFile(list, `Email\n${emails.join("\n")}\nnobody@example.org\nnot an email\n`);
    const { report } = await run(list, "log-opt-out");
    if (report.kind !== "opt-out") throw new Error("not an opt-out run");
    expect([report.updated, report.rejected, report.duplicates]).toEqual([2, 2, 1]);

    const log = (await readLog(url)).log.filter((r) => r.run_id === "log-opt-out-o");
    const by = new Map(log.map((r) => [r.person_digest, r]));
    expect(log).toHaveLength(4);
    for (const email of ["opt-known.1@example.org", "opt-known.2@example.org"]) {
      expect(by.get(personDigest("email", email))).toMatchObject({
        outcome: "opted_out",
        identifier: "email",
      });
    }
    expect(by.get(personDigest("email", "nobody@example.org"))).toMatchObject({
      outcome: "rejected",
      codes: "person_not_found",
      source_rows: [5],
    });
    expect(by.get("row:6")).toMatchObject({ outcome: "rejected", codes: "invalid_identifier" });
    expect(JSON.stringify(log)).not.toContain("@example.org");
  });
});

/** Starts an import of `file` and stops it once the service answered 3 more requests; it rejects. */
async function stoppedRun(
  config: RuntimeConfig,
  file: string,
  request: { runId: string; resumeUnfinished?: boolean },
) {
  await emu.admin("/faults", { body: { route: "importParticipants", latencyMs: 100 } });
  const answered = async () => (await emu.requests()).byRoute.importParticipants?.["200"] ?? 0;
  const base = await answered();
  const stop = new AbortController();
  const first = runImportJob(
    { file, given: { by: "shell" }, job: "log-people", ...request },
    { config, holder: "sync-log test", signal: stop.signal },
  );
  const watching = (async () => {
    while ((await answered()) - base < 3) await new Promise((r) => setTimeout(r, 20));
    stop.abort(new Error("stopped by the test"));
  })();
  await expect(first).rejects.toThrow();
  await watching;
  await emu.admin("/faults", { method: "DELETE" });
}

describe.each([
  { what: "in one part", partLines: undefined },
  { what: "in parts of 120 lines, some loaded before the stop", partLines: 120 },
])("a run stopped mid-import and resumed, its log $what", ({ partLines }) => {
  it("leaves each person once in sync_log, the resumed batches included", async () => {
    const url = `duckdb:${path.join(project.dir, `resume-${Date.now()}.duckdb`)}`;
    const config: RuntimeConfig = {
      ...project.config,
      warehouse: { url },
      syncLog: { ...project.config.syncLog, ...(partLines ? { partLines } : {}) },
    };
    const PEOPLE = 2000;
    const file = path.join(project.dir, `resume-${partLines ?? "whole"}.csv`);
    const rows = Array.from({ length: PEOPLE }, (_, i) => `resume-${partLines}.${i}@example.org,R ${i}`);
    await writeFile(file, `Email,Name\n${rows.join("\n")}\n`);
    await stoppedRun(config, file, { runId: "resume" });
    const stopped = await readLog(url);
    expect(stopped.runs.find((r) => r.runId === "log-people-resume")?.status).toBe("interrupted");
    expect(stopped.log.length).toBeLessThan(PEOPLE);

    const { report } = await runImportJob(
      { file, given: { by: "shell" }, job: "log-people", runId: "resume" },
      { config, holder: "sync-log test" },
    );
    if (report.kind !== "import") throw new Error("not an import");
    const { log, runs } = await readLog(url);
    const digests = log.map((r) => r.person_digest);
    expect(digests).toHaveLength(PEOPLE);
    expect(new Set(digests).size).toBe(PEOPLE);
    expect(log.filter((r) => r.outcome === "imported")).toHaveLength(report.imported);
    expect(log.filter((r) => r.outcome === "unchanged")).toHaveLength(report.unchanged);
    expect(runs.find((r) => r.runId === "log-people-resume")?.status).toBe("succeeded");
  });
});

describe("a run that carries on an unfinished one (import --inline)", () => {
  it("takes its run id whatever --force and --full say, and gives it up once it succeeds", async () => {
    const url = `duckdb:${path.join(project.dir, `carry-on-${Date.now()}.duckdb`)}`;
    const config: RuntimeConfig = { ...project.config, warehouse: { url } };
    const PEOPLE = 1000;
    const file = path.join(project.dir, "carry-on.csv");
    const rows = Array.from({ length: PEOPLE }, (_, i) => `carry-on.${i}@example.org,C ${i}`);
    await writeFile(file, `Email,Name\n${rows.join("\n")}\n`);
    await stoppedRun(config, file, { runId: "first", resumeUnfinished: true });
    expect((await readLog(url)).runs.map((r) => [r.runId, r.status])).toEqual([
      ["log-people-first", "interrupted"],
    ]);

    // Sending everyone again, the rerun still logs every person: it replaces the stopped run's log.
    const run = (runId: string) =>
      runImportJob(
        {
          file,
          given: { by: "shell" },
          job: "log-people",
          runId,
          resumeUnfinished: true,
          force: true,
          full: true,
        },
        { config, holder: "sync-log test" },
      );
    await run("second");
    const carried = await readLog(url);
    expect(carried.runs.map((r) => [r.runId, r.status])).toEqual([["log-people-first", "succeeded"]]);
    expect(carried.log).toHaveLength(PEOPLE);
    expect(new Set(carried.log.map((r) => r.run_id))).toEqual(new Set(["log-people-first"]));

    await run("third");
    const after = await readLog(url);
    expect(after.runs.map((r) => r.runId).sort()).toEqual(["log-people-first", "log-people-third"]);
    expect(after.log.filter((r) => r.run_id === "log-people-first")).toHaveLength(PEOPLE);
    expect(after.log.filter((r) => r.run_id === "log-people-third")).toHaveLength(PEOPLE);
  });
});

/**
 * Issue 32's "sync_log has one row per person of every good file imported in
 * the tests": each real export of the corpus, with the job `jobs suggest`
 * makes for it saved as a job, imported for real (into the emulator) with
 * the sync log on, into a DuckDB and a PostgreSQL warehouse. Each run leaves
 * one sync_log row per person, every row it read in exactly one of them, and
 * counts by outcome that are its report's.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RuntimeConfig } from "../../src/config/index.ts";
import type { ImportReport } from "../../src/imports/index.ts";
import { runImportJob } from "../../src/runtime/run-import-job.ts";
import { suggestionYaml, suggestMappingForFile } from "../../src/suggest/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type TestSchema, withTestSchema } from "../helpers/postgres.ts";
import { type TestProject, testProject } from "../queue/runtime-fixture.ts";
import { readLog } from "../synclog/read-log.ts";
import { Expected } from "./expected.ts";

const CORPUS = import.meta.dirname;
const files = (await readdir(CORPUS)).filter((f) => f.endsWith(".csv")).sort();
const jobName = (file: string) => `corpus-${file.replace(/\.csv$/, "")}`;

let emu: TestEmulator;
let jobsDir: string;
/** The files the suggestion made an import job for: the good files. */
const good = new Set<string>();

beforeAll(async () => {
  emu = await startTestEmulator();
  jobsDir = await mkdtemp(path.join(tmpdir(), "corpus-sync-log-jobs-"));
  for (const name of files) {
    const expected = Expected.parse(
      JSON.parse(await readFile(path.join(CORPUS, name.replace(/\.csv$/, ".expected.json")), "utf8")),
    );
    const suggestion = await suggestMappingForFile(path.join(CORPUS, name), {
      name: jobName(name),
      studyId: expected.study,
    });
    if (!suggestion.definition) continue;
    await writeFile(
      path.join(jobsDir, `${jobName(name)}.yaml`),
      suggestionYaml(suggestion, suggestion.definition),
    );
    good.add(name);
  }
}, 60_000);
afterAll(async () => {
  await emu?.close();
  if (jobsDir) await rm(jobsDir, { recursive: true, force: true });
});

type LogRow = Record<string, unknown>;
const sourceRows = (r: LogRow) => r.source_rows as number[];
const rowsOf = (rows: LogRow[]) => rows.reduce((n, r) => n + sourceRows(r).length, 0);

/** What sync_log says of a run, in the report's terms. */
function countsOfLog(rows: LogRow[]) {
  const by = (outcome: string) => rows.filter((r) => r.outcome === outcome);
  const kept = [...by("imported"), ...by("unchanged")];
  return {
    imported: by("imported").length,
    unchanged: by("unchanged").length,
    // Every row of a person the service refused is rejected, as is every row refused while reading (`row:<n>`).
    rejected: rowsOf(by("rejected")),
    // A person kept is their last row; their earlier rows are merged duplicates.
    duplicates: rowsOf(kept) - kept.length,
  };
}

it("finds a job for every file of the corpus", () => {
  expect(files.length).toBeGreaterThan(0);
  expect(files.filter((f) => !good.has(f))).toEqual([]);
});

for (const kind of ["duckdb", "postgres"] as const) {
  describe(`each corpus file imported with the sync log on, into ${kind}`, () => {
    let project: TestProject;
    let schema: TestSchema | undefined;
    let config: RuntimeConfig;

    beforeAll(async () => {
      // A project (and Redis prefix) of its own: each warehouse's runs are the first of their files.
      project = await testProject({
        baseUrl: emu.baseUrl,
        token: emu.token,
        jobsDir,
        yaml: "syncLog: { enabled: true }",
      });
      schema = kind === "postgres" ? await withTestSchema() : undefined;
      const url = schema?.url ?? `duckdb:${path.join(project.dir, "corpus.duckdb")}`;
      config = { ...project.config, warehouse: { url } };
    });
    afterAll(async () => {
      await schema?.cleanup();
      await project?.cleanup();
    });

    it.each(files)("%s: one row per person, counts as the report's", async (name) => {
      const job = jobName(name);
      const { report } = await runImportJob(
        { file: path.join(CORPUS, name), given: { by: "shell" }, job, runId: kind },
        { config, holder: "corpus sync-log test" },
      );
      if (report.kind !== "import") throw new Error("not an import");
      const { log, runs } = await readLog(config.warehouse.url);
      const runId = `${job}-${kind}`;
      const rows = log.filter((r) => r.run_id === runId);
      const digests = rows.map((r) => String(r.person_digest));
      expect(new Set(digests).size, "people logged twice").toBe(rows.length);
      expect(countsOfLog(rows)).toEqual(countsOf(report));
      // Every row read is in exactly one row of the log: a person's, or its own when refused while reading.
      expect(rowsOf(rows)).toBe(report.rowsRead);
      const ids = new Set(rows.flatMap((r) => (r.import_id ? String(r.import_id).split(",") : [])));
      expect([...ids].sort()).toEqual([...report.importIds].sort());
      expect(runs.find((r) => r.runId === runId)).toMatchObject({ status: "succeeded", kind: "import" });
      expect(JSON.stringify(rows)).not.toMatch(/@[a-z0-9-]+\.[a-z]/i);
    });
  });
}

function countsOf(report: ImportReport) {
  const { imported, unchanged, rejected, duplicates } = report;
  return { imported, unchanged, rejected, duplicates };
}

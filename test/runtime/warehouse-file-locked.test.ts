import { realpathSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WarehouseFileLockedError } from "../../src/errors/index.ts";
import { exportTableSchemas } from "../../src/exports/tables.ts";
import { runExportJob } from "../../src/runtime/run-export-job.ts";
import { createSink } from "../../src/sinks/index.ts";
import { runCli } from "../helpers/cli.ts";
import { holdDuckDbFile } from "../helpers/duckdb-holder.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type TestProject, testProject } from "../queue/runtime-fixture.ts";

/** The program DuckDB names: the holder's executable, symlinks resolved. */
const NODE = realpathSync(process.execPath);

describe("an export into a DuckDB file another process has open", () => {
  let emu: TestEmulator;
  let project: TestProject;
  let file: string;
  const request = () => ({ resources: ["participants"], studies: ["study_1"], warehouse: `duckdb:${file}` });
  beforeAll(async () => {
    emu = await startTestEmulator();
    project = await testProject({ baseUrl: emu.baseUrl, token: emu.token });
    file = path.join(project.dir, "data", "warehouse.duckdb");
    // The file exists, so that it can be opened read-only too.
    const sink = await createSink(`duckdb:${file}`);
    await sink.prepare(exportTableSchemas());
    await sink.close();
  });
  afterAll(async () => {
    await project.cleanup();
    await emu.close();
  });

  it.each([
    { mode: "read-write", readOnly: false },
    { mode: "read-only", readOnly: true },
  ])(
    "names that process and its PID when it has the file open $mode, and runs once it is closed",
    async ({ readOnly }) => {
      const holder = await holdDuckDbFile(file, { readOnly });
      try {
        const run = runExportJob(request(), { config: project.config, holder: "test", shareBudget: false });
        await expect(run).rejects.toBeInstanceOf(WarehouseFileLockedError);
        await expect(run).rejects.toMatchObject({
          code: "warehouse_file_locked",
          retryable: true,
          message: `the DuckDB file ${file} is open in another program (PID ${holder.pid}, ${NODE}): close it there, then run the export again (DuckDB lets no other process write a file one has open, even read-only)`,
        });
      } finally {
        await holder.close();
      }
      // The run lock went with the failed run: the next one is not refused.
      const { report } = await runExportJob(request(), {
        config: project.config,
        holder: "test",
        shareBudget: false,
      });
      expect(report.status).toBe("succeeded");
    },
  );

  it("is one line from recruit-sync export --inline, exit 1", async () => {
    const holder = await holdDuckDbFile(file);
    try {
      const r = await runCli(
        [
          "export",
          "participants",
          "--study",
          "study_1",
          "--inline",
          "--no-shared-budget",
          "--warehouse",
          `duckdb:${file}`,
        ],
        { env: { ...project.env, LOG_LEVEL: "silent" }, cwd: project.dir },
      );
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toEqual([
        `recruit-sync: the DuckDB file ${file} is open in another program (PID ${holder.pid}, ${NODE}): close it there, then run the export again (DuckDB lets no other process write a file one has open, even read-only)`,
      ]);
    } finally {
      await holder.close();
    }
  });
});

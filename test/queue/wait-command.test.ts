import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorker, startWorker } from "../../src/queue/index.ts";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { silentLogger, type TestProject, testProject } from "./runtime-fixture.ts";

describe("import --wait and export --wait", () => {
  let emu: TestEmulator;
  let project: TestProject;
  let worker: RunningWorker;
  beforeAll(async () => {
    emu = await startTestEmulator();
    project = await testProject({
      baseUrl: emu.baseUrl,
      token: emu.token,
      yaml: "queue: { attempts: 2, backoffMs: 100 }\n",
    });
    worker = await startWorker({
      config: project.config,
      logger: silentLogger,
      schedules: false,
      watch: false,
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await project.cleanup();
    await emu.close();
  });

  /** The CLI from another directory, with the project's configuration. */
  const cli = (args: string[]) => runCli(args, { cwd: os.tmpdir(), env: project.env });

  it("enqueues an import, shows its progress and summary, and exits 0", async () => {
    const r = await cli([
      "import",
      path.resolve("samples/hubspot-contacts.csv"),
      "--job",
      "hubspot-contacts",
      "--wait",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^import job import-[0-9a-f]+-[0-9a-f]+ enqueued$/m);
    expect(r.stdout).toMatch(/^completed: done 100%, 13 rows read, 11 imported, 1 rejected/m);
    expect(r.stdout).toContain("hubspot-contacts: 13 rows read → 11 imported");
    // The same file again is recognised, not enqueued twice.
    const again = await cli([
      "import",
      path.resolve("samples/hubspot-contacts.csv"),
      "--job",
      "hubspot-contacts",
    ]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already completed; not enqueued again");
  });

  it("exits 1 with one line when the queued import fails", async () => {
    const file = path.join(project.dir, "no-email.csv");
    await writeFile(file, "Full Name,Company\nAda,ACME\n");
    const r = await cli(["import", file, "--preset", "hubspot", "--study", "study_1", "--wait"]);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^recruit-sync: the import failed: file_missing_identifier: /);
  });

  it("enqueues an export, shows pages and rows per resource, and exits 0; a failing one exits 1", async () => {
    const warehouse = `duckdb:${path.join(project.dir, "data", "wait.duckdb")}`;
    const ok = await cli(["export", "segments", "--warehouse", warehouse, "--wait"]);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^export job export-adhoc-\S+ enqueued$/m);
    expect(ok.stdout).toMatch(/^completed: segments \d+ rows\/1 pages \(succeeded\)/m);
    expect(ok.stdout).toMatch(/^ {2}segments +\d+ +1 +1 /m);

    const bad = await cli([
      "export",
      "participants",
      "--study",
      "study_gone",
      "--warehouse",
      warehouse,
      "--wait",
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toContain("Study not found");
    expect(bad.stdout).toContain("participants");
  });
});

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { ConfigError } from "../../src/errors/index.ts";
import { ImportJobData, parseJobData } from "../../src/queue/index.ts";
import { runImportJob } from "../../src/runtime/run-import-job.ts";

describe("an import definition given whole (the console's way in)", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "inline-definition-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const definition = {
    kind: "import",
    name: "console-upload",
    target: { studyId: "study_1" },
    columns: [
      { column: "E-Mail", to: "email" },
      { column: "Vorname", to: "firstName" },
    ],
  };

  it("runs a dry run of a file with it, as a jobs/ file would, with the study given beside it", async () => {
    const file = path.join(dir, "crm.csv");
    await writeFile(file, "E-Mail,Vorname\nanna@example.org,Anna\nnot-an-email,Bernd\n", { mode: 0o600 });
    const config = loadConfig({ overrides: { paths: { dataDir: dir } } });
    const { report } = await runImportJob(
      { file, given: { by: "shell" }, definition, study: "study_3", dryRun: true, runId: "t1" },
      { config, holder: "test" },
    );
    expect(report.kind).toBe("import");
    if (report.kind !== "import") return;
    expect(report.job).toBe("console-upload");
    expect([report.rowsRead, report.imported, report.rejected]).toEqual([2, 1, 1]);
  });

  it("refuses a definition that does not validate, naming where it is wrong", async () => {
    const file = path.join(dir, "crm.csv");
    await writeFile(file, "E-Mail\nanna@example.org\n", { mode: 0o600 });
    const config = loadConfig({ overrides: { paths: { dataDir: dir } } });
    const wrong = { ...definition, columns: [{ column: "E-Mail", to: "emial" }] };
    const run = runImportJob(
      { file, given: { by: "shell" }, definition: wrong, dryRun: true, runId: "t2" },
      { config, holder: "test" },
    );
    await expect(run).rejects.toBeInstanceOf(ConfigError);
    await expect(run).rejects.toThrow(/^the definition given: columns\.0/);
  });

  it("is job data of the imports queue, alone: not together with a job or a preset", () => {
    const base = { kind: "import", file: "/tmp/x.csv" };
    expect(parseJobData(ImportJobData, { ...base, definition }).ok).toBe(true);
    const both = parseJobData(ImportJobData, { ...base, definition, job: "hubspot-contacts" });
    expect(both.ok).toBe(false);
  });
});

import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { createProject, type Project } from "../queue/helpers.ts";

const phones = {
  kind: "import",
  target: { studyId: "study_1" },
  columns: [
    { column: "Email", to: "email" },
    { column: "Phone", to: "phone", transforms: ["phone"] },
  ],
};

describe("recruit-sync import --phone-country with --job", () => {
  let emu: TestEmulator;
  let project: Project;
  beforeEach(async () => {
    emu = await startTestEmulator();
    project = await createProject({
      redisUrl: REDIS_URL,
      emulator: emu,
      jobs: {
        phones,
        "phones-us": { ...phones, phoneCountry: "US" },
        "opt-outs": { kind: "opt-out" },
      },
    });
  });
  afterEach(async () => {
    await emu.close();
    await project.cleanup();
  });

  const cli = (args: string[]) =>
    runCli(["--config", project.configDir, "import", ...args], { env: project.env, cwd: project.dir });

  it("reads national numbers in the flag's country, over the job's own", async () => {
    const file = await project.file("de.csv", "Email,Phone\nanna@example.org,030 1234567\n");
    for (const job of ["phones", "phones-us"]) {
      const requests = path.join(project.dir, `${job}.requests.jsonl`);
      const r = await cli([
        file,
        "--job",
        job,
        "--phone-country",
        "DE",
        "--inline",
        "--dry-run",
        "--requests",
        requests,
      ]);
      expect(r.code, r.stderr).toBe(0);
      const body = JSON.parse((await readFile(requests, "utf8")).split("\n")[0] as string) as {
        body: { people: { phone?: string }[] };
      };
      expect(body.body.people[0]?.phone).toBe("+49301234567");
    }
  });

  it("exits 2 saying why when the job is an opt-out list", async () => {
    const file = await project.file("o.csv", "Email\nanna@example.org\n");
    const r = await cli([file, "--job", "opt-outs", "--phone-country", "DE", "--inline", "--dry-run"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("--phone-country applies to imports");
  });

  it("a dry run that the real run would refuse says so", async () => {
    const lines = ["Email,Phone"];
    for (let i = 0; i < 120; i++) lines.push(`not-an-email-${i},`);
    const file = await project.file("wrong.csv", `${lines.join("\n")}\n`);
    const r = await cli([file, "--job", "phones", "--inline", "--dry-run"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "phones: a real run would be refused (import_mostly_rejected): 120 of the first 120 rows were rejected",
    );
  });
});

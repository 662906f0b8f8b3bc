import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { createProject, type Project } from "../queue/helpers.ts";

const EMAIL = "consent.once@example.org";

function optOutJob(optIn?: "allow") {
  return {
    kind: "import",
    target: { studyId: "study_1" },
    columns: [
      { column: "Email", to: "email" },
      { column: "Opted Out", to: "isOptedOut" },
    ],
    ...(optIn ? { optIn } : {}),
  };
}

describe("an opt-out column of a CRM export", () => {
  let emu: TestEmulator;
  let project: Project;
  beforeEach(async () => {
    emu = await startTestEmulator();
    project = await createProject({
      redisUrl: REDIS_URL,
      emulator: emu,
      jobs: { crm: optOutJob(), "crm-allow": optOutJob("allow") },
    });
    // Opted out of research in the service, by the person or by ops.
    await emu.admin("/people", { method: "POST", body: { people: [{ email: EMAIL, isOptedOut: true }] } });
  });
  afterEach(async () => {
    await emu.close();
    await project.cleanup();
  });

  const optedOut = async () => {
    const { people } = (await (await emu.admin(`/people/${EMAIL}`)).json()) as {
      people: { isOptedOut: boolean }[];
    };
    return people.map((p) => p.isOptedOut);
  };

  it("never opts a person back in by default, and the report counts what it held back", async () => {
    const file = await project.file("crm.csv", `Email,Opted Out\n${EMAIL},no\nnew.person@example.org,no\n`);
    const r = await runCli(
      ["--config", project.configDir, "import", file, "--job", "crm", "--inline", "--report", "r.json"],
      {
        env: project.env,
        cwd: project.dir,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('2 rows said "not opted out" and were not sent');
    expect(await optedOut()).toEqual([true]);
  });

  it("opts the person back in when the job says optIn: allow", async () => {
    const file = await project.file("crm.csv", `Email,Opted Out\n${EMAIL},no\n`);
    const r = await runCli(
      ["--config", project.configDir, "import", file, "--job", "crm-allow", "--inline"],
      {
        env: project.env,
        cwd: project.dir,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(await optedOut()).toEqual([false]);
  });
});

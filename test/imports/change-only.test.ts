import { readFile } from "node:fs/promises";
import path from "node:path";
import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ImportReport } from "../../src/imports/index.ts";
import { deleteKeysByPrefix } from "../../src/runtime/delete-keys.ts";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { createProject, type Project } from "../queue/helpers.ts";

const PEOPLE = 1000;
/** 20 of the first file's people get a new last name in the second. */
const CHANGED = Array.from({ length: 20 }, (_v, k) => k * 50 + 7);
/** 10 people only the second file holds. */
const NEW = Array.from({ length: 10 }, (_v, k) => PEOPLE + k);

const COLUMNS = [
  { column: "Email", to: "email" },
  { column: "First Name", to: "firstName" },
  { column: "Last Name", to: "lastName" },
];
const JOBS = {
  people: { kind: "import", target: { studyId: "study_1" }, columns: COLUMNS },
  // The same people sent the same way: only the mapping differs.
  "people-ignoring-company": {
    kind: "import",
    target: { studyId: "study_1" },
    columns: COLUMNS,
    ignoreColumns: ["Company"],
  },
  "people-always": { kind: "import", target: { studyId: "study_1" }, columns: COLUMNS, changesOnly: false },
};

const email = (i: number) => `cohort${i}@changes.example`;
const row = (i: number, last = `Last${i}`) => `${email(i)},First${i},${last},Co${i % 7}`;

function firstFile(): string {
  const lines = Array.from({ length: PEOPLE }, (_v, i) => row(i));
  return `Email,First Name,Last Name,Company\n${lines.join("\n")}\n`;
}

/** The first file shuffled, with CHANGED given new last names and NEW added. */
function secondFile(): string {
  const ids = [...Array.from({ length: PEOPLE }, (_v, i) => i), ...NEW];
  let seed = 42;
  for (let i = ids.length - 1; i > 0; i--) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = seed % (i + 1);
    [ids[i], ids[j]] = [ids[j] as number, ids[i] as number];
  }
  const lines = ids.map((i) => row(i, CHANGED.includes(i) ? `Changed${i}` : `Last${i}`));
  return `Email,First Name,Last Name,Company\n${lines.join("\n")}\n`;
}

describe("change-only re-imports", () => {
  let emu: TestEmulator;
  let project: Project;
  let redis: Redis;

  const importFile = async (file: string, job: string, ...flags: string[]) => {
    const reportFile = path.join(project.dir, `report-${Date.now()}-${Math.random()}.json`);
    const r = await runCli(
      [
        "--config",
        project.configDir,
        "import",
        file,
        "--job",
        job,
        "--inline",
        "--report",
        reportFile,
        ...flags,
      ],
      { env: project.env, cwd: project.dir },
    );
    expect(r.code, r.stderr).toBe(0);
    return { stdout: r.stdout, report: ImportReport.parse(JSON.parse(await readFile(reportFile, "utf8"))) };
  };
  /** People the service was sent since `since` imports, by the emulator's own records. */
  const sentSince = async (since: number) => {
    const { imports } = await emu.snapshot();
    return imports.slice(since).reduce((sum, i) => sum + i.count, 0);
  };
  const lastName = async (i: number) => {
    const res = await emu.admin(`/people/${email(i)}`);
    if (res.status === 404) return undefined;
    const { people } = (await res.json()) as { people: { lastName: string | null }[] };
    return people[0]?.lastName;
  };

  beforeEach(async () => {
    emu = await startTestEmulator();
    project = await createProject({ redisUrl: REDIS_URL, emulator: emu, jobs: JOBS });
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const first = await importFile(await project.file("first.csv", firstFile()), "people");
    expect(first.report.imported).toBe(PEOPLE);
    expect(first.report.changeState).toBe("first");
  }, 60_000);
  afterEach(async () => {
    await emu.close();
    await deleteKeysByPrefix(redis, project.prefix);
    redis.disconnect();
    await project.cleanup();
  });

  it("sends only the changed and the new people of a shuffled file, and the service holds every change", async () => {
    const before = (await emu.snapshot()).imports.length;
    const requestsBefore = (await emu.requests()).byRoute.importParticipants?.["200"] ?? 0;
    const { report, stdout } = await importFile(await project.file("second.csv", secondFile()), "people");

    expect(report.changeState).toBe("compared");
    expect(report.imported).toBe(CHANGED.length + NEW.length);
    expect(report.unchanged).toBe(PEOPLE - CHANGED.length);
    expect(report.requests).toBe(1);
    expect((await emu.requests()).byRoute.importParticipants?.["200"]).toBe(requestsBefore + 1);
    expect(await sentSince(before)).toBe(CHANGED.length + NEW.length);
    for (const i of CHANGED) expect(await lastName(i)).toBe(`Changed${i}`);
    for (const i of NEW) expect(await lastName(i)).toBe(`Last${i}`);
    expect(stdout).toContain(
      "980 people were not sent: the same as the last run sent (--full sends everyone)",
    );
  }, 60_000);

  it("sends everyone with --full, and with a job that says changesOnly: false", async () => {
    const file = await project.file("second.csv", secondFile());
    const before = (await emu.snapshot()).imports.length;
    const full = await importFile(file, "people", "--full");
    expect(full.report.changeState).toBe("full");
    expect(full.report.unchanged).toBe(0);
    expect(full.report.imported).toBe(PEOPLE + NEW.length);
    expect(await sentSince(before)).toBe(PEOPLE + NEW.length);

    // The same file again with --full: a file done before is no reason to skip a full run.
    const again = await importFile(file, "people", "--full");
    expect(again.report.status).toBe("completed");
    expect(again.report.imported).toBe(PEOPLE + NEW.length);

    const always = await importFile(file, "people-always");
    expect(always.report.changeState).toBe("full");
    expect(always.report.imported).toBe(PEOPLE + NEW.length);
  }, 60_000);

  it("trusts nothing recorded under another mapping: everyone is sent, even when they would be sent alike", async () => {
    const before = (await emu.snapshot()).imports.length;
    const { report } = await importFile(
      await project.file("first-again.csv", firstFile()),
      "people-ignoring-company",
    );
    expect(report.changeState).toBe("first");
    expect(report.unchanged).toBe(0);
    expect(await sentSince(before)).toBe(PEOPLE);
  }, 60_000);

  it("counts the unchanged in a dry run, which sends and records nothing", async () => {
    const file = await project.file("second.csv", secondFile());
    const before = (await emu.snapshot()).imports.length;
    const requestsFile = path.join(project.dir, "dry.requests.jsonl");
    const dry = await importFile(file, "people", "--dry-run", "--requests", requestsFile);
    expect(dry.report.changeState).toBe("compared");
    expect(dry.report.unchanged).toBe(PEOPLE - CHANGED.length);
    expect(dry.report.imported).toBe(CHANGED.length + NEW.length);
    expect(dry.stdout).toContain("980 people would not be sent");
    const bodies = (await readFile(requestsFile, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { body: { people: unknown[] } });
    expect(bodies.reduce((n, b) => n + b.body.people.length, 0)).toBe(CHANGED.length + NEW.length);
    expect(await sentSince(before)).toBe(0);

    // Nothing was recorded: the real run still sends the same 30.
    const real = await importFile(file, "people");
    expect(real.report.imported).toBe(CHANGED.length + NEW.length);

    // Now everyone is unchanged: the dry run would send nothing, so it leaves no requests
    // file — and no stale one from the dry run above at the same path.
    const none = await importFile(file, "people", "--dry-run", "--requests", requestsFile);
    expect(none.report.unchanged).toBe(PEOPLE + NEW.length);
    expect(none.report.requests).toBe(0);
    expect(none.report.requestsFile).toBeNull();
    expect(none.stdout).not.toContain(requestsFile);
    await expect(readFile(requestsFile, "utf8")).rejects.toMatchObject({ code: "ENOENT" });
  }, 60_000);
});

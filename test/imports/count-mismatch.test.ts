import { readFile } from "node:fs/promises";
import path from "node:path";
import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  clearUnverified,
  ImportReport,
  personDigest,
  readUnverified,
  unverifiedKeys,
  unverifiedStudiesKey,
} from "../../src/imports/index.ts";
import { deleteKeysByPrefix } from "../../src/runtime/delete-keys.ts";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { createProject, type Project } from "../queue/helpers.ts";

const PEOPLE = 30;
const email = (i: number) => `counted${i}@mismatch.example`;
const JOBS = {
  people: {
    kind: "import",
    target: { studyId: "study_1" },
    batchSize: 10,
    columns: [
      { column: "Email", to: "email" },
      { column: "First Name", to: "firstName" },
    ],
  },
};

describe("an import answer whose count differs from the people sent", () => {
  let emu: TestEmulator;
  let project: Project;
  let redis: Redis;

  beforeEach(async () => {
    emu = await startTestEmulator();
    project = await createProject({ redisUrl: REDIS_URL, emulator: emu, jobs: JOBS });
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  });
  afterEach(async () => {
    await emu.close();
    await deleteKeysByPrefix(redis, project.prefix);
    redis.disconnect();
    await project.cleanup();
  });

  it("warns with the batch and its import id, reports it, and marks that batch's people unverified by digest", async () => {
    // The first import request answered is told one person short; the others are honest.
    const set = await emu.admin("/faults", {
      body: { route: "importParticipants", countOffset: -1, count: 1 },
    });
    expect(set.status).toBe(200);
    const lines = Array.from({ length: PEOPLE }, (_v, i) => `${email(i)},First${i}`);
    const file = await project.file("people.csv", `Email,First Name\n${lines.join("\n")}\n`);
    const reportFile = path.join(project.dir, "report.json");
    const run = await runCli(
      ["--config", project.configDir, "import", file, "--job", "people", "--inline", "--report", reportFile],
      // The log at warn: the command is silent unless asked.
      { env: { ...project.env, LOG_LEVEL: "warn" }, cwd: project.dir },
    );
    expect(run.code, run.stderr).toBe(0);
    const report = ImportReport.parse(JSON.parse(await readFile(reportFile, "utf8")));
    expect(report.imported).toBe(PEOPLE);

    expect(report.countMismatches).toHaveLength(1);
    const [m] = report.countMismatches;
    if (!m) throw new Error("no mismatch reported");
    expect(report.importIds).toContain(m.importId);
    expect(m.counted).toBe(m.sent - 1);
    const warning = report.warnings.find((w) => w.includes(m.importId));
    expect(warning).toBe(
      `batch ${m.batch}: the service counted ${m.counted} of the ${m.sent} people sent (import ${m.importId}); they are marked unverified until a participants export checks them`,
    );
    expect(run.stdout).toContain(`(import ${m.importId})`);
    // The log line names the import id too, and no person.
    const logged = `${run.stdout}${run.stderr}`
      .split("\n")
      .find((l) => l.includes("counted other than the people sent"));
    expect(logged).toContain(m.importId);
    expect(`${run.stdout}${run.stderr}`).not.toContain("@mismatch.example");

    // That batch's people, and only they, are marked with its import id; the marks hold no email.
    const marks = await redis.hgetall(unverifiedKeys(project.prefix, "study_1").people);
    expect(Object.keys(marks)).toHaveLength(m.sent);
    expect(new Set(Object.values(marks))).toEqual(new Set([m.importId]));
    const digests = new Map(Array.from({ length: PEOPLE }, (_v, i) => [personDigest("email", email(i)), i]));
    for (const d of Object.keys(marks)) expect(digests.has(d)).toBe(true);
    expect(JSON.stringify(marks)).not.toContain("@");
    const about = JSON.parse(
      (await redis.hget(unverifiedKeys(project.prefix, "study_1").imports, m.importId)) ?? "{}",
    );
    expect(about).toMatchObject({ batch: m.batch, sent: m.sent, counted: m.counted, identifier: "email" });
    expect(await redis.smembers(unverifiedStudiesKey(project.prefix))).toEqual(["study_1"]);
    expect(await redis.ttl(unverifiedKeys(project.prefix, "study_1").people)).toBeGreaterThan(0);

    // A check that finds them clears their marks, and the study leaves the list once none is left.
    const marked = [...(await readUnverified(redis, project.prefix, "study_1")).keys()];
    expect(await clearUnverified(redis, project.prefix, "study_1", marked.slice(1))).toBe(marked.length - 1);
    expect(await redis.smembers(unverifiedStudiesKey(project.prefix))).toEqual(["study_1"]);
    expect(await clearUnverified(redis, project.prefix, "study_1", marked.slice(0, 1))).toBe(1);
    expect(await redis.smembers(unverifiedStudiesKey(project.prefix))).toEqual([]);
    expect(await redis.exists(unverifiedKeys(project.prefix, "study_1").imports)).toBe(0);
  }, 60_000);

  it("marks nobody when every answer counts right", async () => {
    const lines = Array.from({ length: PEOPLE }, (_v, i) => `${email(i)},First${i}`);
    const file = await project.file("people.csv", `Email,First Name\n${lines.join("\n")}\n`);
    const reportFile = path.join(project.dir, "report.json");
    const run = await runCli(
      ["--config", project.configDir, "import", file, "--job", "people", "--inline", "--report", reportFile],
      { env: project.env, cwd: project.dir },
    );
    expect(run.code, run.stderr).toBe(0);
    const report = ImportReport.parse(JSON.parse(await readFile(reportFile, "utf8")));
    expect(report.countMismatches).toEqual([]);
    expect(await redis.exists(unverifiedKeys(project.prefix, "study_1").people)).toBe(0);
  }, 60_000);
});

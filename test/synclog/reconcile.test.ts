/**
 * The read-back check: the emulator drops 1% of imported people silently;
 * the next participants export marks exactly those people `missing`, and the
 * resend brings every one of them into the service, sending nobody else.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readReconciliations } from "../../src/alerts/index.ts";
import type { RuntimeConfig } from "../../src/config/index.ts";
import { personDigest } from "../../src/imports/index.ts";
import { resendMissing } from "../../src/runtime/resend-missing.ts";
import { runExportJob } from "../../src/runtime/run-export-job.ts";
import { runImportJob } from "../../src/runtime/run-import-job.ts";
import { createSink } from "../../src/sinks/create-sink.ts";
import { SYNC_LOG_TABLE } from "../../src/synclog/table.ts";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { withTestSchema } from "../helpers/postgres.ts";
import { type TestProject, testProject } from "../queue/runtime-fixture.ts";

const PEOPLE = 5000;
const SEED = 11;
let emu: TestEmulator;
let project: TestProject;
let jobsDir: string;

beforeAll(async () => {
  emu = await startTestEmulator({
    seed: SEED,
    faults: [{ route: "importParticipants", dropPeopleRate: 0.01 }],
  });
  jobsDir = await mkdtemp(path.join(tmpdir(), "reconcile-jobs-"));
  await writeFile(
    path.join(jobsDir, "recon-people.yaml"),
    [
      "kind: import",
      "target: { studyId: study_2 }",
      "batchSize: 500",
      "columns:",
      "  - { column: Email, to: email }",
      "  - { column: Name, to: firstName }",
    ].join("\n"),
  );
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

async function logRows(url: string) {
  const sink = await createSink(url);
  try {
    await sink.prepare([SYNC_LOG_TABLE]);
    return await sink.readTable("sync_log");
  } finally {
    await sink.close();
  }
}

async function inService(study: string): Promise<Set<string>> {
  const snap = await emu.snapshot();
  const byId = new Map(snap.people.map((p) => [p.personId, p.email]));
  const found = new Set<string>();
  for (const p of snap.participants ?? []) if (p.studyId === study) found.add(byId.get(p.personId) ?? "");
  return found;
}

describe("read-back reconciliation", () => {
  it("marks exactly the dropped people missing, and the resend brings each of them in, nobody else", async () => {
    const schema = await withTestSchema();
    const config: RuntimeConfig = { ...project.config, warehouse: { url: schema.url } };
    const ctx = { config, holder: "reconcile test" };
    try {
      const emails = Array.from({ length: PEOPLE }, (_, i) => `recon.${i}@example.org`);
      const file = path.join(project.dir, "recon.csv");
      await mkdir(project.dir, { recursive: true });
      await writeFile(file, `Email,Name\n${emails.map((e, i) => `${e},P ${i}`).join("\n")}\n`);
      const { report } = await runImportJob(
        { file, given: { by: "shell" }, job: "recon-people", runId: "first" },
        ctx,
      );
      if (report.kind !== "import") throw new Error("not an import");
      expect(report.imported).toBe(PEOPLE);

      const dropped = (await (await emu.admin("/faults/dropped")).json()) as { people: { key: string }[] };
      const droppedEmails = dropped.people.map((p) => p.key).sort();
      expect(droppedEmails.length).toBeGreaterThan(10);
      const landed = await inService("study_2");
      expect(emails.filter((e) => !landed.has(e)).sort()).toEqual(droppedEmails);

      const exp = await runExportJob(
        { definition: { kind: "export", resources: ["participants"], studies: ["study_2"], pageSize: 100 } },
        ctx,
      );
      expect(exp.report.reconciliation).toEqual([
        { studyId: "study_2", verified: PEOPLE - droppedEmails.length, missing: droppedEmails.length },
      ]);
      const log = (await logRows(schema.url)).filter((r) => r.run_id === "recon-people-first");
      const missing = log.filter((r) => r.verification === "missing").map((r) => r.person_digest);
      expect(missing.sort()).toEqual(droppedEmails.map((e) => personDigest("email", e)).sort());
      expect(log.filter((r) => r.verification === "verified")).toHaveLength(PEOPLE - droppedEmails.length);
      // The missingPeople alert rule hears of the check (counts only).
      const redis = new Redis(project.config.redis.url);
      try {
        const heard = await readReconciliations(redis, project.config.redis.prefix);
        expect(heard.find((o) => o.job === "study study_2")).toMatchObject({
          missing: droppedEmails.length,
          checked: PEOPLE,
        });
      } finally {
        redis.disconnect();
      }

      // The resend: the fault stops, and only the missing people go out again.
      await emu.admin("/faults", { method: "DELETE" });
      const before = await emu.requests();
      const resent = await resendMissing(ctx, "study_2");
      expect(resent.left).toEqual([]);
      expect(resent.resent).toHaveLength(1);
      const again = resent.resent[0]?.report;
      if (again?.kind !== "import") throw new Error("not an import");
      expect(again.imported).toBe(droppedEmails.length);
      expect(again.rowsRead).toBe(droppedEmails.length);
      const after = await emu.requests();
      const imports = (r: typeof before) => r.byRoute.importParticipants?.["200"] ?? 0;
      expect(imports(after) - imports(before)).toBe(1);
      const landedNow = await inService("study_2");
      expect(emails.filter((e) => !landedNow.has(e))).toEqual([]);
      const marked = (await logRows(schema.url)).filter((r) => r.verification === "resent");
      expect(marked).toHaveLength(droppedEmails.length);
    } finally {
      await schema.cleanup();
    }
  }, 120_000);

  it("pages the study and resends through the binary: reconcile --study S --resend", async () => {
    await emu.admin("/faults", { body: { route: "importParticipants", dropPeopleRate: 0.01 } });
    const emails = Array.from({ length: 2000 }, (_, i) => `bin.${i}@example.org`);
    const file = path.join(project.dir, "bin.csv");
    await writeFile(file, `Email,Name\n${emails.map((e, i) => `${e},B ${i}`).join("\n")}\n`);
    await writeFile(
      path.join(jobsDir, "bin-people.yaml"),
      [
        "kind: import",
        "target: { studyId: study_3 }",
        "batchSize: 500",
        "columns:",
        "  - { column: Email, to: email }",
        "  - { column: Name, to: firstName }",
      ].join("\n"),
    );
    await runImportJob(
      { file, given: { by: "shell" }, job: "bin-people", runId: "bin" },
      {
        config: project.config,
        holder: "reconcile test",
      },
    );
    const dropped = (
      (await (await emu.admin("/faults/dropped")).json()) as { people: { key: string }[] }
    ).people
      .map((p) => p.key)
      .filter((k) => k.startsWith("bin."));
    expect(dropped.length).toBeGreaterThan(0);
    await emu.admin("/faults", { method: "DELETE" });

    const out = await runCli(
      ["--config", project.configDir, "reconcile", "--study", "study_3", "--resend", "--json"],
      {
        env: project.env,
        cwd: project.dir,
      },
    );
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    const result = JSON.parse(out.stdout) as {
      checked: { studyId: string; verified: number; missing: number }[];
      resent: { people: number; imported: number }[];
      left: unknown[];
    };
    expect(result.checked).toEqual([
      { studyId: "study_3", verified: 2000 - dropped.length, missing: dropped.length },
    ]);
    expect(result.resent).toEqual([
      { fromRun: "bin-people-bin", people: dropped.length, imported: dropped.length },
    ]);
    expect(result.left).toEqual([]);
    const landed = await inService("study_3");
    expect(emails.filter((e) => !landed.has(e))).toEqual([]);
  }, 120_000);

  it("sends the missing people again at the end of the export when syncLog.resendMissing says so", async () => {
    const schema = await withTestSchema();
    const config: RuntimeConfig = {
      ...project.config,
      warehouse: { url: schema.url },
      syncLog: { ...project.config.syncLog, resendMissing: true },
    };
    const ctx = { config, holder: "reconcile test" };
    try {
      await emu.admin("/faults", { body: { route: "importParticipants", dropPeopleRate: 0.01 } });
      const emails = Array.from({ length: 2000 }, (_, i) => `auto.${i}@example.org`);
      const file = path.join(project.dir, "auto.csv");
      await writeFile(file, `Email,Name\n${emails.map((e, i) => `${e},A ${i}`).join("\n")}\n`);
      await writeFile(
        path.join(jobsDir, "auto-people.yaml"),
        [
          "kind: import",
          "target: { studyId: study_4 }",
          "batchSize: 500",
          "columns:",
          "  - { column: Email, to: email }",
        ].join("\n"),
      );
      await runImportJob({ file, given: { by: "shell" }, job: "auto-people", runId: "auto" }, ctx);
      await emu.admin("/faults", { method: "DELETE" });
      const before = await emu.requests();
      const { report } = await runExportJob(
        { definition: { kind: "export", resources: ["participants"], studies: ["study_4"], pageSize: 100 } },
        ctx,
      );
      const missing = report.reconciliation?.[0]?.missing ?? 0;
      expect(missing).toBeGreaterThan(0);
      const after = await emu.requests();
      const imports = (r: typeof before) => r.byRoute.importParticipants?.["200"] ?? 0;
      expect(imports(after) - imports(before)).toBe(1);
      const landed = await inService("study_4");
      expect(emails.filter((e) => !landed.has(e))).toEqual([]);
    } finally {
      await schema.cleanup();
    }
  }, 120_000);
});

import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { demoSucceeded, formatDemoSummary } from "../../src/cli/demo/demo-summary.ts";
import { redisAnswers } from "../../src/cli/demo/ensure-redis.ts";
import { type DemoResult, runDemo } from "../../src/cli/demo/run-demo.ts";
import { RecruitSyncError } from "../../src/errors/index.ts";
import { REDIS_URL } from "../helpers/env.ts";

const repo = path.resolve(import.meta.dirname, "../..");

/** A project folder as a new user's clone has it: config/, jobs/ and samples/, no data/. */
function cleanProject(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "demo-"));
  for (const part of ["config", "jobs", "samples"]) {
    cpSync(path.join(repo, part), path.join(dir, part), { recursive: true });
  }
  return dir;
}

/** What must come out the same from every run in one folder. */
function outcome(demo: DemoResult) {
  return {
    watched: demo.watched.map((f) => ({
      name: f.name,
      outcome: f.outcome,
      imported: f.report && (f.report.kind === "import" ? f.report.imported : f.report.updated),
      rejected: f.report?.rejected,
    })),
    exported: Object.fromEntries(
      Object.entries(demo.scheduled.report?.resources ?? {}).map(([t, r]) => [t, r.rows]),
    ),
    tables: demo.tables,
    byHand: demo.byHand.report && {
      kind: demo.byHand.report.kind,
      rejected: demo.byHand.report.rejected,
      imported: demo.byHand.report.kind === "import" ? demo.byHand.report.imported : undefined,
    },
  };
}

describe("the demo", () => {
  const project = cleanProject();
  afterAll(() => rmSync(project, { recursive: true, force: true }));
  let first: ReturnType<typeof outcome> | undefined;

  it("shows the three ways in on a clean clone: watched folder, schedule, an import enqueued by hand", async () => {
    const lines: string[] = [];
    const demo = await runDemo({ root: project, opsPort: 0, out: (l) => lines.push(l) });
    try {
      expect(demoSucceeded(demo)).toBe(true);

      // Way 1: every sample filed in processed/ beside its owner-only report; the samples carry awkward rows on purpose.
      expect(demo.watched.map((f) => [f.job, f.outcome])).toEqual([
        ["hubspot-contacts", "processed"],
        ["salesforce-contacts", "processed"],
        ["mailchimp-audience", "processed"],
        ["opt-out-list", "processed"],
      ]);
      for (const f of demo.watched) {
        expect(existsSync(f.filedAt)).toBe(true);
        expect(f.filedAt).toContain(path.join("data", "demo", "inbox", f.job, "processed"));
        expect(statSync(`${f.filedAt}.report.json`).mode & 0o777).toBe(0o600);
        expect(f.report?.rejected).toBeGreaterThan(0);
      }
      // The opt-out list meets the people the HubSpot file brought in.
      const optOut = demo.watched[3]?.report;
      expect(optOut?.kind === "opt-out" && optOut.updated).toBeGreaterThan(0);

      // Way 2: a job from the nightly export's own scheduler, into ./data/warehouse.duckdb of the project.
      expect(demo.scheduled.schedulerId).toBe("schedule-nightly-export");
      expect(demo.scheduled.state).toBe("completed");
      expect(demo.scheduled.report?.status).toBe("succeeded");
      expect(demo.config.warehouse.url).toBe(`duckdb:${path.join(project, "data", "warehouse.duckdb")}`);
      expect(existsSync(path.join(project, "data", "warehouse.duckdb"))).toBe(true);
      // The demo's emulator guards its admin API with the token it printed.
      const adminAuth = { headers: { authorization: `Bearer ${demo.emulator.adminToken}` } };
      expect((await fetch(`${demo.emulator.origin}/__emulator/snapshot`)).status).toBe(401);
      expect(demo.emulator.adminToken).toMatch(/^emu_admin_/);
      expect(lines.join("\n")).toContain(`admin token ${demo.emulator.adminToken}`);
      const snapshot = (await (
        await fetch(`${demo.emulator.origin}/__emulator/snapshot`, adminAuth)
      ).json()) as {
        participants: { studyId: string }[];
      };
      const inExportedStudies = snapshot.participants.filter((p) =>
        ["study_1", "study_5", "study_9"].includes(p.studyId),
      ).length;
      // Way 3 ran after the export: its study_5 participants are not in the warehouse yet.
      const byHandImported = demo.byHand.report?.kind === "import" ? demo.byHand.report.imported : 0;
      expect(demo.tables.participants).toBe(inExportedStudies - byHandImported);
      expect(demo.tables.segments).toBeGreaterThan(0);
      expect(demo.tables.email_messages).toBeGreaterThan(0);

      // Way 3: the CLI's enqueue, followed to its end; its people reached study_5.
      expect(demo.byHand.jobId).toMatch(/^import-/);
      expect(demo.byHand.duplicate).toBe(false);
      expect(demo.byHand.state).toBe("completed");
      expect(byHandImported).toBeGreaterThan(0);
      expect(snapshot.participants.filter((p) => p.studyId === "study_5").length).toBeGreaterThanOrEqual(
        byHandImported,
      );

      // The worker counted every request the emulator answered.
      const served = (await (
        await fetch(`${demo.emulator.origin}/__emulator/requests`, adminAuth)
      ).json()) as {
        total: number;
      };
      expect(demo.counters.responses.reduce((n, r) => n + r.count, 0)).toBe(served.total);

      // The dashboard answers without a login, on loopback.
      expect(demo.dashboardUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ui\/$/);
      expect((await fetch(demo.dashboardUrl)).status).toBe(200);

      const summary = formatDemoSummary(demo).join("\n");
      expect(summary).toContain("way 1");
      expect(summary).toContain("way 2");
      expect(summary).toContain("way 3");
      expect(summary).toContain(demo.dashboardUrl);
      expect(`${lines.join("\n")}\n${summary}`).not.toMatch(/@example\.(com|org|net)/i);
      first = outcome(demo);
    } finally {
      await demo.stop();
    }
    // The run's keys left with it.
    const r = new Redis(demo.redis.url);
    const left = await r.keys(`${demo.config.redis.prefix}:*`);
    r.disconnect();
    expect(left).toEqual([]);
  });

  it("gives the same outcome when run again in the same folder, here on a redis-server it starts itself", async () => {
    expect(first).toBeDefined();
    const demo = await runDemo({ root: project, opsPort: 0, throwawayRedis: true, out: () => {} });
    try {
      expect(demo.redis.source).toBe("started");
      expect(demo.cursorReset).toBe(true);
      expect(outcome(demo)).toEqual(first);
      // Only this run's files: the demo's folder was cleared first.
      expect(
        readdirSync(path.join(project, "data", "demo", "inbox", "hubspot-contacts", "processed")),
      ).toEqual([
        "hubspot-contacts.csv",
        "hubspot-contacts.csv.rejects.csv",
        "hubspot-contacts.csv.report.json",
        // The optional values left out of people who were imported (invalidOptionalValues: drop).
        "hubspot-contacts.csv.warnings.csv",
      ]);
    } finally {
      await demo.stop();
    }
    expect(await redisAnswers(demo.redis.url)).toBe(false);
  });

  it("fails with one line, and leaves no keys behind, when a way runs past its deadline", async () => {
    const lines: string[] = [];
    const err = await runDemo({
      root: project,
      opsPort: 0,
      wayTimeoutMs: 1,
      out: (l) => lines.push(l),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RecruitSyncError);
    expect((err as RecruitSyncError).code).toBe("job_failed");
    expect((err as Error).message).toMatch(/was not filed in processed\/ or failed\/ within/);
    const prefix = /keys under (\S+):\*/.exec(lines.join("\n"))?.[1];
    expect(prefix).toMatch(/^recruit-sync-demo-/);
    const r = new Redis(REDIS_URL);
    const left = await r.keys(`${prefix}:*`);
    r.disconnect();
    expect(left).toEqual([]);
  });
});

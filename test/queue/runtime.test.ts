import { copyFile, mkdir, open, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJobFiles } from "../../src/config/index.ts";
import {
  openQueues,
  type Queues,
  type RunningWorker,
  reconcileSchedulers,
  startWorker,
} from "../../src/queue/index.ts";
import { connectRedis } from "../../src/runtime/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { eventually, silentLogger, type TestProject, testProject } from "./runtime-fixture.ts";

const sample = (name: string) => path.resolve("samples", name);

async function listAll(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return entries.map(String).sort();
}

describe("job schedulers follow jobs/", () => {
  let project: TestProject;
  let queues: Queues;
  beforeAll(async () => {
    project = await testProject({ baseUrl: "http://127.0.0.1:9/api/public/v1" });
  });
  afterAll(async () => {
    await queues?.close();
    await project.cleanup();
  });

  it("adds, changes and removes schedulers as definitions come, change and go, and reports an invalid one", async () => {
    const jobs = path.join(project.dir, "jobs");
    await mkdir(jobs);
    const exportJob = (cron: string) =>
      `kind: export\nresources: [segments]\nschedule: { cron: "${cron}", timezone: Europe/Berlin }\n`;
    await writeFile(path.join(jobs, "nightly.yaml"), exportJob("30 2 * * *"));
    await writeFile(path.join(jobs, "hourly.yaml"), exportJob("0 * * * *"));
    await writeFile(
      path.join(jobs, "broken.yaml"),
      'kind: export\nschedule: { cron: "99 * * * *", timezone: Nowhere/City }\n',
    );
    const config = { ...project.config, paths: { ...project.config.paths, jobsDir: jobs } };
    const redis = await connectRedis(config, "test");
    queues = openQueues(config, redis);

    const first = await reconcileSchedulers(config, queues.exports, silentLogger);
    expect(first.added.sort()).toEqual(["schedule-hourly", "schedule-nightly"]);
    expect(first.invalid).toHaveLength(1);
    expect(first.invalid[0]?.file).toContain("broken.yaml");
    expect(first.invalid[0]?.problems.map((p) => p.path)).toEqual(expect.arrayContaining(["schedule.cron"]));

    await writeFile(path.join(jobs, "nightly.yaml"), exportJob("45 3 * * *"));
    await writeFile(path.join(jobs, "hourly.yaml"), "kind: export\nresources: [segments]\n");
    const second = await reconcileSchedulers(config, queues.exports, silentLogger);
    expect(second.updated).toEqual(["schedule-nightly"]);
    expect(second.removed).toEqual(["schedule-hourly"]);
    const schedulers = await queues.exports.getJobSchedulers(0, -1);
    expect(schedulers.map((s) => [s.key, s.pattern, s.tz])).toEqual([
      ["schedule-nightly", "45 3 * * *", "Europe/Berlin"],
    ]);
    expect(schedulers[0]?.template?.data).toMatchObject({
      kind: "export",
      job: "nightly",
      origin: "schedule",
    });

    // The committed jobs/ folder schedules its nightly export.
    const committed = await reconcileSchedulers(
      config,
      queues.exports,
      silentLogger,
      await readJobFiles(path.resolve("jobs")),
    );
    expect(committed.added).toEqual(["schedule-nightly-export"]);
    expect(committed.removed).toEqual(["schedule-nightly"]);
    redis.disconnect();
  });
});

describe("the worker", () => {
  let emu: TestEmulator;
  let project: TestProject;
  let worker: RunningWorker;
  let inbox: string;
  beforeAll(async () => {
    emu = await startTestEmulator();
    project = await testProject({
      baseUrl: emu.baseUrl,
      token: emu.token,
      yaml: "queue: { lockMs: 5000, backoffMs: 100, attempts: 3 }\nwatch:\n  - { folder: ./inbox, job: mailchimp-audience, stableMs: 400 }\n  - { folder: ./unknown-job, job: no-such-job, stableMs: 100 }\n",
    });
    inbox = path.join(project.dir, "inbox");
    worker = await startWorker({
      config: project.config,
      logger: silentLogger,
      schedules: false,
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await project.cleanup();
    await emu.close();
  });

  it("imports a file dropped twice under two names once, and files both in processed/", async () => {
    const before = (await emu.requests()).byRoute.importParticipants ?? {};
    await copyFile(sample("mailchimp-audience.csv"), path.join(inbox, "first.csv"));
    await copyFile(sample("mailchimp-audience.csv"), path.join(inbox, "second copy.csv"));
    const processed = path.join(inbox, "processed");
    const names = await eventually(
      async () => {
        const found = await readdir(processed).catch(() => [] as string[]);
        const dropped = found.filter((n) => n.endsWith(".csv") && !/\.(rejects|warnings)\.csv$/.test(n));
        return dropped.length === 2 ? found.sort() : undefined;
      },
      20_000,
      "both files in processed/",
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}; the inbox holds ${JSON.stringify(await listAll(inbox))}`);
    });
    expect(names).toEqual(
      expect.arrayContaining([
        "first.csv",
        "second copy.csv",
        "first.csv.report.json",
        "second copy.csv.report.json",
      ]),
    );
    const reports = await Promise.all(
      ["first.csv", "second copy.csv"].map(async (n) =>
        JSON.parse(await readFile(path.join(processed, `${n}.report.json`), "utf8")),
      ),
    );
    const imported = reports.filter((r) => r.kind === "import");
    const duplicate = reports.filter((r) => r.duplicateOf);
    expect(imported).toHaveLength(1);
    expect(duplicate).toHaveLength(1);
    expect(duplicate[0].duplicateOf).toBe(imported[0].jobId);
    expect(imported[0].imported).toBeGreaterThan(0);
    const after = (await emu.requests()).byRoute.importParticipants ?? {};
    const sent = (after["200"] ?? 0) - (before["200"] ?? 0);
    expect(sent).toBe(imported[0].requests);
    expect(await readdir(path.join(inbox, "processing"))).toEqual([]);
  });

  it("files a dropped file whose job enqueueImport refuses in failed/, with the refusal's code and words", async () => {
    const folder = path.join(project.dir, "unknown-job");
    await copyFile(sample("mailchimp-audience.csv"), path.join(folder, "contacts.csv"));
    const failed = path.join(folder, "failed");
    const report = await eventually(
      async () => {
        const text = await readFile(path.join(failed, "contacts.csv.report.json"), "utf8").catch(() => "");
        return text ? JSON.parse(text) : undefined;
      },
      20_000,
      "contacts.csv filed in failed/",
    );
    expect(report.failure).toEqual({
      code: "config_invalid",
      message: expect.stringMatching(/^no job definition no-such-job: .* does not exist/),
    });
    expect((await readdir(failed)).sort()).toEqual(["contacts.csv", "contacts.csv.report.json"]);
    expect(await readdir(path.join(folder, "processing"))).toEqual([]);
  });

  it("takes a file written slowly only once it is complete", async () => {
    // Bytes of its own (one more person), so it is imported rather than recognised as the sample.
    const text = `${(await readFile(sample("mailchimp-audience.csv"), "utf8")).trimEnd()}\nslow.writer@example.com,Slow,Writer\n`;
    const lines = text.trimEnd().split("\n");
    const target = path.join(inbox, "slow.csv");
    const fh = await open(target, "w");
    // Pauses shorter than the stability window each, so the file is still growing when the watcher first sees it.
    for (let i = 0; i < lines.length; i++) {
      await fh.write(`${lines[i]}${i < lines.length - 1 ? "\n" : ""}`);
      if (i % 3 === 0) await new Promise((r) => setTimeout(r, 150));
    }
    await fh.close();
    const report = await eventually(
      async () => {
        const f = path.join(inbox, "processed", "slow.csv.report.json");
        return JSON.parse(await readFile(f, "utf8").catch(() => "null")) ?? undefined;
      },
      30_000,
      "slow.csv in processed/",
    );
    expect(report.kind).toBe("import");
    expect(report.rowsRead).toBe(lines.filter((l) => l.trim()).length - 1);
    expect(await readdir(path.join(inbox, "failed")).catch(() => [])).toEqual([]);
  });

  it("fails a job added by hand with bad data at once, naming every problem, and does not retry it", async () => {
    const q = new Queue("imports", { connection: { url: project.config.redis.url }, prefix: project.prefix });
    try {
      const job = await q.add("import", { kind: "import", file: "relative.csv", dryRun: "yes" } as never, {
        attempts: 5,
      });
      const failed = await eventually(
        async () => ((await job.getState()) === "failed" ? true : undefined),
        15_000,
        "the job to fail",
      );
      expect(failed).toBe(true);
      const fresh = await q.getJob(job.id as string);
      expect(fresh?.attemptsMade).toBe(1);
      expect(fresh?.failedReason).toMatch(/^invalid job data: /);
      expect(fresh?.failedReason).toContain("file: an absolute path");
      expect(fresh?.failedReason).toContain("dryRun:");
      expect(fresh?.progress).toMatchObject({ failure: { code: "job_data_invalid", final: true } });
    } finally {
      await q.close();
    }
  });
});

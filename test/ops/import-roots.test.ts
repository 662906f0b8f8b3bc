/**
 * Issue 29, 1: the ops password must not read a file the worker can read.
 * A 0600 secrets file is put through every way in that takes a path — the
 * ops API, a job saved in the console, the dashboard's "Add job", job data
 * added straight to the queue — with a worker running. Each is refused with
 * one line, and nothing of the file comes back anywhere: HTTP answers,
 * /api/runs, Redis (failedReason, returnvalue, progress, logs), files of the
 * project, the log. Files under a root, uploads and files the CLI was given
 * still import.
 */
import {
  copyFile,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Job } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RuntimeConfig } from "../../src/config/index.ts";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { enqueueImport, followJob, type RunningWorker, startWorker } from "../../src/queue/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { AUTH, call, type OpsProject, REPO_JOBS, SAMPLES, withOpsProject } from "./ops-fixture.ts";

const CONSOLE = { ...AUTH, "x-requested-with": "recruit-sync-console" };

/** What must never come back: each secret line of the file. */
const SECRET = "secret-XYZ";
const SECRETS_FILE = [
  "# production secrets",
  `RECRUIT_SYNC_API_TOKEN=${SECRET}-token-4f1d`,
  `RECRUIT_SYNC_OPS_PASSWORD=${SECRET}-password-9a2c`,
  `DATABASE_URL=postgres://admin:${SECRET}-db-77e0@db.internal/prod`,
  "",
].join("\n");

/** A job that maps the secrets file's first line as the email column: run on it, every other line is a reject. */
const LEAK_DEFINITION = {
  kind: "import",
  target: { studyId: "study_1", identifier: "email" },
  columns: [{ column: "# production secrets", to: "email" }],
};

/** Every file under `dir`, recursively, but the secrets files themselves. */
async function filesUnder(dir: string, skip: readonly string[]): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => !skip.includes(f));
}

/** Every value under the prefix, whatever its type: what Redis keeps of the jobs. */
async function redisDump(redis: Redis, prefix: string): Promise<string> {
  const out: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", "500");
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      out.push(key);
      if (type === "string") out.push(String(await redis.get(key)));
      else if (type === "hash") out.push(JSON.stringify(await redis.hgetall(key)));
      else if (type === "list") out.push(JSON.stringify(await redis.lrange(key, 0, -1)));
      else if (type === "set") out.push(JSON.stringify(await redis.smembers(key)));
      else if (type === "zset") out.push(JSON.stringify(await redis.zrange(key, "0", "-1")));
      else if (type === "stream") out.push(JSON.stringify(await redis.xrange(key, "-", "+")));
    }
  } while (cursor !== "0");
  return out.join("\n");
}

/** The one line every way in refuses the file with. */
const ONE_LINE =
  /^refused \/\S+: a queued import reads only files under .* \(uploads\), .* \(imports\.roots\), or one named to 'recruit-sync import' at a shell; this file (is outside them|leads outside them through a symbolic link)\. Upload it in the console, drop it into a watched folder, or add its folder to imports\.roots in the configuration$/;

describe("a secrets file the worker can read, through every way in that takes a path", () => {
  let emu: TestEmulator;
  let project: OpsProject;
  let config: RuntimeConfig;
  let worker: RunningWorker;
  let ops: OpsServer;
  let redis: Redis;
  let secretsDir: string;
  let secrets: string;
  let root: string;
  /** Every HTTP answer of this test, as text. */
  const answers: string[] = [];
  /** The jobs added by hand that must fail. */
  const handAdded: Job[] = [];

  beforeAll(async () => {
    emu = await startTestEmulator();
    project = await withOpsProject({ baseUrl: emu.baseUrl, token: emu.token });
    const jobsDir = path.join(project.dir, "jobs");
    await cp(REPO_JOBS, jobsDir, { recursive: true });
    // The fixture's imports.roots.
    root = project.incoming;
    await mkdir(root, { recursive: true });
    config = { ...project.config, paths: { ...project.config.paths, jobsDir } };
    secretsDir = await realpath(await mkdtemp(path.join(os.tmpdir(), "recruit-sync-secrets-")));
    secrets = path.join(secretsDir, "secrets.env");
    await writeFile(secrets, SECRETS_FILE, { mode: 0o600 });
    // What a forged watched-file job would point at: the folder's processing/ copy.
    await mkdir(path.join(secretsDir, "processing"));
    await writeFile(path.join(secretsDir, "processing", "secrets.env"), SECRETS_FILE, { mode: 0o600 });
    await symlink(secrets, path.join(root, "innocent.csv"));
    worker = await startWorker({ config, logger: project.logger, schedules: false, watch: false });
    ops = await startOpsServer({ config, logger: project.logger, queues: worker.queues });
    redis = new Redis(REDIS_URL, { lazyConnect: true });
    await redis.connect();
  });
  afterAll(async () => {
    redis?.disconnect();
    await ops?.close();
    await worker?.stop();
    await emu?.close();
    await project?.cleanup();
    if (secretsDir) await rm(secretsDir, { recursive: true, force: true });
  });

  const http = async (...args: Parameters<typeof call>) => {
    const res = await call(...args);
    answers.push(res.text);
    return res;
  };

  it("refuses it on the ops API with 403 and one line: named directly, through a link in a root, climbing out with ..", async () => {
    for (const file of [
      secrets,
      path.join(root, "innocent.csv"),
      `${root}/../../${path.relative("/", secrets)}`,
    ]) {
      const res = await http(`${ops.url}/api/jobs/hubspot-contacts/run`, { headers: AUTH, body: { file } });
      expect(res.status).toBe(403);
      const body = res.body as { error: string; message: string; problems: { path: string }[] };
      expect(body.error).toBe("file_not_allowed");
      expect(body.message).toMatch(ONE_LINE);
      expect(body.message).toContain(root);
      expect(body.problems.map((p) => p.path)).toEqual(["file"]);
    }
    expect(await worker.queues.imports.getJobCounts()).toMatchObject({
      waiting: 0,
      prioritized: 0,
      failed: 0,
    });
  });

  it("refuses it for a job saved in the console that maps its first line as the email column", async () => {
    const saved = await http(`${ops.url}/api/jobs`, {
      headers: CONSOLE,
      body: { name: "leak", definition: LEAK_DEFINITION },
    });
    expect(saved.status).toBe(201);
    const res = await http(`${ops.url}/api/jobs/leak/run`, { headers: AUTH, body: { file: secrets } });
    expect(res.status).toBe(403);
    expect((res.body as { message: string }).message).toMatch(ONE_LINE);
  });

  it("refuses it on the dashboard's Add job, with the one line", async () => {
    for (const data of [
      { kind: "import", job: "leak", file: secrets },
      { kind: "import", definition: LEAK_DEFINITION, file: secrets },
      { kind: "import", job: "leak", file: secrets, fileGrant: "ab".repeat(32) },
    ]) {
      const res = await http(`${ops.url}/ui/api/queues/imports/add`, {
        headers: AUTH,
        body: { name: "import", data, options: {} },
      });
      expect(res.status).toBe(400);
      expect(res.text).toContain("refused ");
      expect(res.text).toContain("imports.roots");
    }
  });

  it("fails job data added straight to the queue at once, never retried: a saved job, a whole definition, a forged grant, a forged watched folder", {
    timeout: 30_000,
  }, async () => {
    const forged = [
      { kind: "import", job: "leak", file: secrets, origin: "dashboard" },
      { kind: "import", definition: LEAK_DEFINITION, file: secrets, origin: "dashboard" },
      { kind: "import", job: "leak", file: secrets, fileGrant: "0".repeat(64), origin: "cli" },
      {
        kind: "import",
        job: "leak",
        file: secrets,
        watched: { folder: secretsDir, name: "secrets.env" },
        origin: "watch",
      },
    ];
    for (const [i, data] of forged.entries()) {
      handAdded.push(
        await worker.queues.imports.add(`by-hand-${i}`, data as never, { attempts: 5, backoff: 100 }),
      );
    }
    for (const job of handAdded) {
      const end = await followJob(worker.queues.imports, String(job.id), () => {});
      expect(end.state).toBe("failed");
      expect(end.failedReason).toMatch(/^file_not_allowed: refused /);
      expect(end.failedReason).not.toContain("\n");
      expect(end.returnvalue ?? null).toBeNull();
      const done = await worker.queues.imports.getJob(String(job.id));
      expect(done?.attemptsMade).toBe(1);
    }
    // A forged watched folder is never written to: no failed/ beside the secrets, no report.
    await expect(stat(path.join(secretsDir, "failed"))).rejects.toMatchObject({ code: "ENOENT" });
    expect((await readdir(path.join(secretsDir, "processing"))).sort()).toEqual(["secrets.env"]);
  });

  it("fails an export added by hand whose incentive ids file is the secrets file, and refuses it on Add job", {
    timeout: 30_000,
  }, async () => {
    const data = { kind: "export", job: "nightly-export", incentiveIdsFile: secrets, origin: "dashboard" };
    const added = await http(`${ops.url}/ui/api/queues/exports/add`, {
      headers: AUTH,
      body: { name: "export", data, options: {} },
    });
    expect(added.status).toBe(400);
    expect(added.text).toContain("refused ");
    const job = await worker.queues.exports.add("by-hand", data as never, { attempts: 5, backoff: 100 });
    const end = await followJob(worker.queues.exports, String(job.id), () => {});
    expect(end.state).toBe("failed");
    expect(end.failedReason).toMatch(/^file_not_allowed: refused /);
    expect((await worker.queues.exports.getJob(String(job.id)))?.attemptsMade).toBe(1);
    expect(await emu.requests()).not.toMatchObject({ byRoute: { getIncentive: expect.anything() } });
  });

  it("lets nothing of the file out: HTTP answers, /api/runs, Redis, files, the log", async () => {
    const runs = await http(`${ops.url}/api/runs?limit=50`, { headers: AUTH });
    expect(runs.status).toBe(200);
    for (const job of handAdded) {
      const view = await http(`${ops.url}/api/runs/imports/${job.id}`, { headers: AUTH });
      expect(view.status).toBe(200);
    }
    expect(runs.text).toContain("file_not_allowed");
    for (const answer of answers) {
      expect(answer).not.toContain(SECRET);
      expect(answer).not.toContain("RECRUIT_SYNC_API_TOKEN");
    }
    const dump = await redisDump(redis, project.prefix);
    expect(dump).toContain("file_not_allowed");
    expect(dump).not.toContain(SECRET);
    expect(dump).not.toContain("RECRUIT_SYNC_API_TOKEN");
    const skip = [secrets, path.join(secretsDir, "processing", "secrets.env")];
    for (const file of [...(await filesUnder(project.dir, skip)), ...(await filesUnder(secretsDir, skip))]) {
      if (file.endsWith(".duckdb")) continue;
      expect(await readFile(file, "utf8"), file).not.toContain(SECRET);
    }
    const log = project.logText();
    expect(log).toContain("file_not_allowed");
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain("RECRUIT_SYNC_API_TOKEN");
  });

  it("still imports a file under imports.roots through the ops API, and an uploaded file through the console", {
    timeout: 60_000,
  }, async () => {
    const file = path.join(root, "hubspot-contacts.csv");
    await copyFile(path.join(SAMPLES, "hubspot-contacts.csv"), file);
    const res = await http(`${ops.url}/api/jobs/hubspot-contacts/run`, { headers: AUTH, body: { file } });
    expect(res.status).toBe(202);
    const viaApi = await followJob(worker.queues.imports, (res.body as { jobId: string }).jobId, () => {});
    expect(viaApi.state).toBe("completed");
    expect(viaApi.returnvalue).toMatchObject({ dryRun: false });
    expect((viaApi.returnvalue as { imported: number }).imported).toBeGreaterThan(0);

    const form = new FormData();
    const csv = "Email,First Name\nrosalind.quarry@example.org,Rosalind\n";
    form.append("file", new Blob([csv], { type: "text/csv" }), "upload.csv");
    const uploaded = await fetch(`${ops.url}/api/uploads`, { method: "POST", headers: CONSOLE, body: form });
    expect(uploaded.status).toBe(201);
    const { uploadId } = (await uploaded.json()) as { uploadId: string };
    const definition = {
      kind: "import",
      target: { studyId: "study_1", identifier: "email" },
      columns: [
        { column: "Email", to: "email" },
        { column: "First Name", to: "firstName" },
      ],
    };
    const run = await http(`${ops.url}/api/uploads/${uploadId}/run`, {
      headers: CONSOLE,
      body: { definition },
    });
    expect(run.status).toBe(202);
    const viaConsole = await followJob(
      worker.queues.imports,
      (run.body as { jobId: string }).jobId,
      () => {},
    );
    expect(viaConsole.state).toBe("completed");
    expect(viaConsole.returnvalue).toMatchObject({ imported: 1, rejected: 0 });
  });

  it("still imports a file the CLI was handed, wherever it is: the CLI signs it, the worker checks the signature", {
    timeout: 60_000,
  }, async () => {
    const file = path.join(secretsDir, "contacts-from-a-shell.csv");
    await writeFile(file, "Email,First Name\nbartholomew.quince@example.org,Bartholomew\n");
    const enqueued = await enqueueImport(
      config,
      worker.queues,
      { file, preset: "hubspot", study: "study_1", origin: "cli" },
      { givenAtShell: true },
    );
    const job = await worker.queues.imports.getJob(enqueued.jobId);
    expect(job?.data.fileGrant).toMatch(/^[0-9a-f]{64}$/);
    const end = await followJob(worker.queues.imports, enqueued.jobId, () => {});
    expect(end.state).toBe("completed");
    expect(end.returnvalue).toMatchObject({ imported: 1 });
    // The same path without the CLI's word: refused before it is read.
    await expect(
      enqueueImport(config, worker.queues, {
        file,
        preset: "hubspot",
        study: "study_1",
        origin: "dashboard",
      }),
    ).rejects.toMatchObject({ code: "file_not_allowed" });
  });
});

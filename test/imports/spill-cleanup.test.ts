import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { removeStaleSpills, spillFolderName } from "../../src/imports/spill-folder.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import { eventually, type TestProject, testProject } from "../queue/runtime-fixture.ts";

const bin = path.resolve("bin/recruit-sync.mjs");
const run = promisify(execFile);

const JOB =
  "kind: import\ntarget: { studyId: study_1 }\ncolumns:\n  - { column: Email, to: email }\n  - { column: Name, to: firstName }\nbatchSize: 30\n";

async function peopleFile(dir: string, name: string, tag: string, count: number): Promise<string> {
  const rows = ["Email,Name"];
  for (let i = 0; i < count; i++) rows.push(`${tag}${i}@example.com,P${i}`);
  const file = path.join(dir, name);
  await writeFile(file, `${rows.join("\n")}\n`);
  return file;
}

function startImport(project: TestProject, file: string, job: string): ChildProcess {
  return spawn(process.execPath, [bin, "import", file, "--job", job, "--inline"], {
    env: { ...process.env, ...project.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

async function importToEnd(project: TestProject, file: string, job: string) {
  try {
    const r = await run(process.execPath, [bin, "import", file, "--job", job, "--inline"], {
      env: { ...process.env, ...project.env },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function spillFolders(root: string): Promise<string[]> {
  return (await readdir(root).catch(() => [] as string[])).filter((n) => n.startsWith("import-"));
}

/**
 * Starts an import slowed by service latency, waits until its spill folder
 * holds the rows and batches are going out, and SIGKILLs it.
 */
async function killMidImport(emu: TestEmulator, project: TestProject, file: string, job: string) {
  const root = path.join(project.dir, "data", "spill");
  await emu.admin("/faults", { body: { route: "importParticipants", latencyMs: 80 } });
  const before = (await emu.requests()).byRoute.importParticipants?.["200"] ?? 0;
  const child = startImport(project, file, job);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const folder = await eventually(
    async () => {
      const sent = (await emu.requests()).byRoute.importParticipants?.["200"] ?? 0;
      const [name] = await spillFolders(root);
      if (sent - before < 3 || name === undefined) return undefined;
      return path.join(root, name);
    },
    30_000,
    "the import to spill its rows and send batches",
  ).finally(() => child.kill("SIGKILL"));
  await exited;
  await emu.admin("/faults", { method: "DELETE" });
  return folder;
}

describe("the spill of an import lives under the data folder and does not outlive its import", () => {
  let emu: TestEmulator;
  let project: TestProject;
  let dir: string;
  let job: string;
  beforeAll(async () => {
    emu = await startTestEmulator();
    project = await testProject({ baseUrl: emu.baseUrl, token: emu.token });
    dir = await mkdtemp(path.join(tmpdir(), "recruit-sync-spill-"));
    job = path.join(dir, "job.yaml");
    await writeFile(job, JOB);
  });
  afterAll(async () => {
    await project.cleanup();
    await emu.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a SIGKILLed import's spill is removed by the rerun", async () => {
    const file = await peopleFile(dir, "killed.csv", "spill", 1200);
    const folder = await killMidImport(emu, project, file, job);

    // What the killed run left: a private folder holding people's data.
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    const spill = path.join(folder, "rows.spill");
    expect((await stat(spill)).mode & 0o777).toBe(0o600);
    expect(await readFile(spill, "utf8")).toContain("spill1199@example.com");

    // The folder is named by the run lock the killed run still holds.
    const r = await withTestRedis();
    try {
      const [lockKey, ...others] = await r.redis.keys(`${project.prefix}:lock:import:*`);
      expect(others).toEqual([]);
      expect(path.basename(folder)).toBe(spillFolderName(lockKey as string));
      // Its holder is dead; cut the 30 s lease short instead of waiting it out.
      await r.redis.del(lockKey as string);
    } finally {
      r.redis.disconnect();
    }

    const rerun = await importToEnd(project, file, job);
    expect(rerun.stderr).toBe("");
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toContain("1,200 rows read → 1,200 imported");
    expect(await spillFolders(path.join(project.dir, "data", "spill"))).toEqual([]);

    const emails = (await emu.snapshot()).people
      .map((p) => p.email)
      .filter((e): e is string => typeof e === "string" && /^spill\d+@example\.com$/.test(e));
    expect(emails).toHaveLength(1200);
    expect(new Set(emails).size).toBe(1200);
  }, 90_000);

  it("removes at start the spill a killed import of another file left", async () => {
    const killedFile = await peopleFile(dir, "other-killed.csv", "left", 900);
    const left = await killMidImport(emu, project, killedFile, job);
    expect(await readFile(path.join(left, "rows.spill"), "utf8")).toContain("left899@example.com");

    // Another file: another lock, another folder. The killed run's lease has not even run out.
    const other = await peopleFile(dir, "other.csv", "fresh", 40);
    const done = await importToEnd(project, other, job);
    expect(done.stderr).toBe("");
    expect(done.code).toBe(0);
    expect(await stat(left).catch(() => "gone")).toBe("gone");
    expect(await spillFolders(path.join(project.dir, "data", "spill"))).toEqual([]);
  }, 90_000);
});

describe("which spill folders are stale", () => {
  let root: string;
  let r: TestRedis;
  beforeAll(async () => {
    r = await withTestRedis();
  });
  afterAll(async () => {
    await r.cleanup();
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function folder(lockKey: string | null, host: string, pid: number): Promise<string> {
    const name = lockKey ? spillFolderName(lockKey) : `run-${randomUUID()}`;
    await mkdir(path.join(root, name), { mode: 0o700 });
    const owner = { lockKey, host, pid, startedAt: new Date().toISOString() };
    await writeFile(path.join(root, name, "owner.json"), JSON.stringify(owner), { mode: 0o600 });
    await writeFile(path.join(root, name, "rows.spill"), "1\t0\t{}\n", { mode: 0o600 });
    return name;
  }

  async function deadPid(): Promise<number> {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((resolve) => child.once("exit", resolve));
    return child.pid as number;
  }

  it("keeps live runs' folders, here or elsewhere, and removes those whose run is over", async () => {
    root = await mkdtemp(path.join(tmpdir(), "recruit-sync-stale-"));
    const heldKey = `${r.prefix}:lock:import:held`;
    await r.redis.set(heldKey, "a run on another host", "PX", 60_000);
    const liveHere = await folder(`${r.prefix}:lock:import:live`, hostname(), process.pid);
    const liveElsewhere = await folder(heldKey, "another-host", 4242);
    const overElsewhere = await folder(`${r.prefix}:lock:import:expired`, "another-host", 4242);
    const deadHere = await folder(`${r.prefix}:lock:import:dead`, hostname(), await deadPid());
    const dryRunHere = await folder(null, hostname(), await deadPid());
    const dryRunElsewhere = await folder(null, "another-host", 4242);
    await mkdir(path.join(root, "not-a-spill"));

    const removed = await removeStaleSpills({ root, redis: r.redis });

    expect(removed.sort()).toEqual([deadHere, dryRunHere, overElsewhere].sort());
    expect((await readdir(root)).sort()).toEqual(
      [dryRunElsewhere, liveElsewhere, liveHere, "not-a-spill"].sort(),
    );
  });

  it("removes a folder without an owner file only once no run can still be about to write it", async () => {
    root = await mkdtemp(path.join(tmpdir(), "recruit-sync-stale-"));
    const fresh = `run-${randomUUID()}`;
    const old = `run-${randomUUID()}`;
    await mkdir(path.join(root, fresh), { mode: 0o700 });
    await mkdir(path.join(root, old), { mode: 0o700 });
    const elevenMinutesAgo = new Date(Date.now() - 11 * 60_000);
    await utimes(path.join(root, old), elevenMinutesAgo, elevenMinutesAgo);

    expect(await removeStaleSpills({ root, redis: r.redis })).toEqual([old]);
    expect(await readdir(root)).toEqual([fresh]);
  });

  it("keeps another host's folder when Redis cannot say whether its lock is held", async () => {
    root = await mkdtemp(path.join(tmpdir(), "recruit-sync-stale-"));
    const name = await folder(`${r.prefix}:lock:import:unknown`, "another-host", 4242);
    // A client of a port nothing listens on: every command fails at once.
    const down = new Redis(1, "127.0.0.1", {
      lazyConnect: true,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    down.on("error", () => {});
    expect(await removeStaleSpills({ root, redis: down })).toEqual([]);
    down.disconnect();
    expect(await removeStaleSpills({ root })).toEqual([]);
    expect(await readdir(root)).toEqual([name]);
  });
});

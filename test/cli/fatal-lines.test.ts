import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_BIN, type CliResult, runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import { NOTHING_ON_DISK, spawnOwnRedis, stopRedisProcess } from "../helpers/redis-process.ts";
import { eventually } from "../queue/runtime-fixture.ts";

/*
 * The failures that end a run from outside — a full disk, Redis gone — print
 * one line naming what was written or asked for, and what to change.
 */

const dirs: string[] = [];
const mounts: string[] = [];
const owned: TestRedis[] = [];
let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  for (const m of mounts) execFileSync("umount", [m]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const r of owned) await r.cleanup();
  await emu.close();
});

/** A project: config/default.yaml with `settings`, a Redis prefix of its own. */
async function project(
  settings: string[],
  redisUrl = REDIS_URL,
  redisMore = "",
): Promise<{ dir: string; config: string }> {
  const redis = await withTestRedis();
  owned.push(redis);
  const dir = mkdtempSync(path.join(tmpdir(), "recruit-sync-fatal-"));
  dirs.push(dir);
  mkdirSync(path.join(dir, "config"));
  writeFileSync(
    path.join(dir, "config", "default.yaml"),
    [`redis: { url: "${redisUrl}", prefix: "${redis.prefix}"${redisMore} }`, ...settings, ""].join("\n"),
  );
  return { dir, config: path.join(dir, "config") };
}

/** A folder on a tmpfs of `size` bytes, or undefined where mounting is not allowed (not root). */
function tinyDisk(size: number): string | undefined {
  const dir = mkdtempSync(path.join(tmpdir(), "recruit-sync-tiny-disk-"));
  dirs.push(dir);
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  mounts.push(dir);
  return dir;
}

function people(dir: string, count: number): string {
  const rows = ["Email,Name,Notes"];
  for (let i = 0; i < count; i++) rows.push(`full${i}@example.com,Person ${i},${"n".repeat(200)}`);
  const file = path.join(dir, "people.csv");
  writeFileSync(file, `${rows.join("\n")}\n`);
  const job = path.join(dir, "job.yaml");
  writeFileSync(
    job,
    "kind: import\ntarget: { studyId: study_1 }\ncolumns:\n  - { column: Email, to: email }\n  - { column: Name, to: firstName }\n",
  );
  return file;
}

function cli(config: string, args: string[]): Promise<CliResult> {
  return runCli(args, {
    env: {
      NODE_ENV: "",
      RECRUIT_SYNC_CONFIG_DIR: config,
      RECRUIT_SYNC_API_TOKEN: emu.token,
      RECRUIT_SYNC_BASE_URL: emu.baseUrl,
      REDIS_URL: "",
    },
  });
}

describe("a full disk", () => {
  it("names the file being written and the setting that moves it", async (ctx) => {
    const disk = tinyDisk(32 * 1024);
    if (disk === undefined) return ctx.skip();
    const { dir, config } = await project([`paths: { dataDir: "${disk}" }`]);
    const file = people(dir, 20000);
    const r = await cli(config, ["import", file, "--job", path.join(dir, "job.yaml"), "--inline"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^recruit-sync: no space left to write ${disk}/spill/[^ ]+/rows\\.spill \\(ENOSPC\\): free space on that disk, or move it with paths\\.dataDir in the configuration; a rerun resumes where this one stopped\n$`,
      ),
    );
  }, 60_000);
});

/** Runs the CLI until it exits on its own; `whileRunning` acts on it meanwhile. */
function runUntilExit(config: string, args: string[], redisUrl: string): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    env: {
      ...process.env,
      NODE_ENV: "",
      RECRUIT_SYNC_CONFIG_DIR: config,
      RECRUIT_SYNC_API_TOKEN: emu.token,
      RECRUIT_SYNC_BASE_URL: emu.baseUrl,
      REDIS_URL: redisUrl,
    },
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d) => (stderr += d));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

const GONE =
  /^recruit-sync: Redis at redis:\/\/127\.0\.0\.1:\d+ stopped answering and did not come back within 2 s \(redis\.giveUpAfterMs\): start it again, or set REDIS_URL to one that answers; a rerun resumes where this one stopped$/;

describe("Redis gone for good", () => {
  it("ends an inline import with one line once redis.giveUpAfterMs has passed", async () => {
    const own = await spawnOwnRedis(NOTHING_ON_DISK);
    try {
      const { dir, config } = await project([], own.url, ", giveUpAfterMs: 2000");
      const file = people(dir, 3000);
      await emu.admin("/faults", { body: { route: "importParticipants", latencyMs: 300 } });
      const before = (await emu.requests()).byRoute.importParticipants?.["200"] ?? 0;
      const ran = runUntilExit(
        config,
        ["import", file, "--job", path.join(dir, "job.yaml"), "--inline"],
        own.url,
      );
      await eventually(async () =>
        ((await emu.requests()).byRoute.importParticipants?.["200"] ?? 0) > before ? true : undefined,
      );
      await stopRedisProcess(own.child, "SIGKILL");
      const r = await ran;
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(GONE);
    } finally {
      await stopRedisProcess(own.child, "SIGKILL");
      await emu.admin("/faults", { method: "DELETE" });
    }
  }, 60_000);

  it("ends a worker with one line", async () => {
    const own = await spawnOwnRedis(NOTHING_ON_DISK);
    try {
      const { config } = await project([], own.url, ", giveUpAfterMs: 2000");
      const ran = runUntilExit(config, ["worker", "--no-schedules", "--no-watch"], own.url);
      // Started: the worker has joined the fleet in its Redis.
      const { Redis } = await import("ioredis");
      const probe = new Redis(own.url, { lazyConnect: true, retryStrategy: () => null });
      probe.on("error", () => {});
      await eventually(async () => ((await probe.keys("*fleet*")).length > 0 ? true : undefined));
      probe.disconnect();
      await stopRedisProcess(own.child, "SIGKILL");
      const r = await ran;
      expect(r.code).toBe(1);
      // The worker's JSON log says it too; the CLI's own line is the last.
      expect(r.stderr.trim().split("\n").at(-1)).toMatch(GONE);
    } finally {
      await stopRedisProcess(own.child, "SIGKILL");
    }
  }, 60_000);
});

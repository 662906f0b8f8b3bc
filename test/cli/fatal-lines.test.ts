import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";

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
async function project(settings: string[], redisUrl = REDIS_URL): Promise<{ dir: string; config: string }> {
  const redis = await withTestRedis();
  owned.push(redis);
  const dir = mkdtempSync(path.join(tmpdir(), "recruit-sync-fatal-"));
  dirs.push(dir);
  mkdirSync(path.join(dir, "config"));
  writeFileSync(
    path.join(dir, "config", "default.yaml"),
    [`redis: { url: "${redisUrl}", prefix: "${redis.prefix}" }`, ...settings, ""].join("\n"),
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
    console.log(r);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  }, 60_000);
});

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { deleteKeysByPrefix } from "../../src/runtime/delete-keys.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { basic, call, REPO_JOBS } from "./ops-fixture.ts";

const bin = path.resolve("bin/recruit-sync.mjs");
const PASSWORD = `pw-${randomUUID()}`;

const prefixes: string[] = [];

/** Deletes every key the projects' prefixes made. */
async function cleanupPrefixes(): Promise<void> {
  const redis = new Redis(REDIS_URL);
  for (const prefix of prefixes.splice(0)) {
    await deleteKeysByPrefix(redis, prefix);
  }
  redis.disconnect();
}

/** A project folder of its own: its config, a `test-<uuid>` prefix, the repo's jobs. */
async function project(extra = ""): Promise<{ dir: string; configDir: string; prefix: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "recruit-sync-ops-cli-"));
  const prefix = `test-${randomUUID()}`;
  prefixes.push(prefix);
  const configDir = path.join(dir, "config");
  await mkdir(configDir);
  await writeFile(
    path.join(configDir, "default.yaml"),
    `service:
  baseUrl: http://127.0.0.1:9/api/public/v1
redis:
  url: ${REDIS_URL}
  prefix: ${prefix}
warehouse:
  url: duckdb:./data/warehouse.duckdb
paths:
  jobsDir: ${REPO_JOBS}
  dataDir: ./data
log:
  level: warn
ops:
  port: 0
${extra}`,
  );
  return { dir, configDir, prefix };
}

/** Starts the command and resolves with the dashboard address it prints. */
function start(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, NODE_ENV: "", RECRUIT_SYNC_CONFIG_DIR: "", RECRUIT_SYNC_OPS_PASSWORD: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  return new Promise((resolve, reject) => {
    // `ops` prints the address; `worker --ops` logs it (JSON on stderr).
    const look = () => {
      const m = /(http:\/\/127\.0\.0\.1:\d+)\/ui\//.exec(out + err);
      if (m?.[1]) resolve({ child, url: m[1] });
    };
    child.stdout?.on("data", (d) => {
      out += d;
      look();
    });
    child.stderr?.on("data", (d) => {
      err += d;
      look();
    });
    child.once("exit", (code) => reject(new Error(`exited ${code} before listening: ${out}${err}`)));
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

describe("recruit-sync ops", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
    await cleanupPrefixes();
  });

  it("serves the dashboard behind basic auth until SIGTERM, then exits 0", async () => {
    const p = await project();
    dirs.push(p.dir);
    const { child, url } = await start(["--config", p.configDir, "ops"], {
      RECRUIT_SYNC_OPS_PASSWORD: PASSWORD,
    });
    try {
      expect((await call(`${url}/healthz`)).status).toBe(200);
      expect((await call(`${url}/api/jobs`)).status).toBe(401);
      expect((await call(`${url}/api/jobs`, { headers: basic("ops", PASSWORD) })).status).toBe(200);
    } finally {
      const exited = exitOf(child);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    }
  });

  it("refuses to start without a password, in one line with exit code 2", async () => {
    const p = await project();
    dirs.push(p.dir);
    const r = await promisify(execFile)(process.execPath, [bin, "--config", p.configDir, "ops"], {
      env: { ...process.env, NODE_ENV: "", RECRUIT_SYNC_OPS_PASSWORD: "" },
    }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([
      "recruit-sync: the ops server needs a password: set RECRUIT_SYNC_OPS_PASSWORD (the user is ops.user), or set ops.auth: false in the configuration for a local demo",
    ]);
  });

  it("runs without auth when the configuration says ops.auth: false", async () => {
    const p = await project();
    dirs.push(p.dir);
    await writeFile(path.join(p.configDir, "local.yaml"), "ops:\n  auth: false\n");
    const { child, url } = await start(["--config", p.configDir, "ops", "--port", "0"], {
      NODE_ENV: "local",
    });
    try {
      expect((await call(`${url}/api/jobs`)).status).toBe(200);
    } finally {
      const exited = exitOf(child);
      child.kill("SIGINT");
      expect(await exited).toBe(0);
    }
  });

  it("refuses a password written in a configuration file", async () => {
    const p = await project("  password: in-a-file\n");
    dirs.push(p.dir);
    const r = await promisify(execFile)(process.execPath, [bin, "--config", p.configDir, "ops"], {
      env: { ...process.env, NODE_ENV: "" },
    }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ops.password must not be in a file; set RECRUIT_SYNC_OPS_PASSWORD instead");
    expect(r.stderr).not.toContain("in-a-file");
  });
});

describe("recruit-sync worker --ops", () => {
  it("serves the ops server from the worker's process and stops both on SIGTERM", async () => {
    const p = await project();
    const { child, url } = await start(["--config", p.configDir, "worker", "--ops", "--no-schedules"], {
      RECRUIT_SYNC_OPS_PASSWORD: PASSWORD,
      LOG_LEVEL: "info",
    });
    try {
      const res = await call(`${url}/api/governor`, { headers: basic("ops", PASSWORD) });
      expect(res.status).toBe(200);
      expect(res.body).toHaveProperty("queues.imports.counts");
    } finally {
      const exited = exitOf(child);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      await rm(p.dir, { recursive: true, force: true });
      await cleanupPrefixes();
    }
  });
});

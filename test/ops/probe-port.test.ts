import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { runCli } from "../helpers/cli.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { withTestRedis } from "../helpers/redis.ts";
import { AUTH, call, type OpsProject, PASSWORD, REPO_JOBS, withOpsProject } from "./ops-fixture.ts";

const bin = path.resolve(import.meta.dirname, "../../bin/recruit-sync.mjs");

describe("the probe port", () => {
  let project: OpsProject;
  let ops: OpsServer;

  beforeAll(async () => {
    project = await withOpsProject();
    ops = await startOpsServer({ config: project.config, logger: project.logger, probePort: 0 });
    await ops.metricsReady;
  });
  afterAll(async () => {
    await ops?.close();
    await project?.cleanup();
  });

  it("listens on a port of its own beside the ops port", () => {
    expect(ops.probeUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ops.probeUrl).not.toBe(ops.url);
  });

  it("answers /healthz, /readyz and /metrics without the password", async () => {
    const health = await call(`${ops.probeUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok" });

    const ready = await call(`${ops.probeUrl}/readyz`);
    expect(ready.status, ready.text).toBe(200);
    expect((ready.body as { checks: { name: string }[] }).checks.map((c) => c.name)).toContain("redis");

    const metrics = await call(`${ops.probeUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get("content-type")).toContain("text/plain");
    expect(metrics.text).toContain("recruit_sync_queue_jobs");
  });

  it.each(["/", "/ui/", "/ui/api/queues", "/api/jobs", "/api/runs", "/api/governor"])(
    "answers 404 for %s, with or without the password",
    async (route) => {
      for (const headers of [{}, AUTH]) {
        const res = await call(`${ops.probeUrl}${route}`, { headers });
        expect(res.status).toBe(404);
        expect(res.text).toContain("the probe port serves /healthz, /readyz, /metrics only");
        expect(res.text).not.toContain("nightly");
      }
    },
  );

  it("serves no job run: a POST to the ops API is 404 and enqueues nothing", async () => {
    const res = await call(`${ops.probeUrl}/api/jobs/nightly-export/run`, { method: "POST", body: {} });
    expect(res.status).toBe(404);
    const governor = await call(`${ops.url}/api/governor`, { headers: AUTH });
    expect(governor.body).toMatchObject({ queues: { exports: { counts: { waiting: 0, prioritized: 0 } } } });
  });

  it("leaves the ops port as it was: everything but /healthz asks for the password", async () => {
    for (const route of ["/readyz", "/metrics", "/api/jobs", "/ui/"]) {
      const res = await call(`${ops.url}${route}`);
      expect(res.status, route).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Basic");
    }
    expect((await call(`${ops.url}/healthz`)).status).toBe(200);
    expect((await call(`${ops.url}/readyz`, { headers: AUTH })).status).toBe(200);
  });
});

describe("without a probe port", () => {
  it("serves the ops port alone, as before", async () => {
    const project = await withOpsProject();
    const ops = await startOpsServer({ config: project.config, logger: project.logger });
    try {
      expect(ops.probeUrl).toBeUndefined();
      expect((await call(`${ops.url}/metrics`)).status).toBe(401);
    } finally {
      await ops.close();
      await project.cleanup();
    }
  });
});

describe("the probe port from the command line", () => {
  const dirs: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
    for (const c of cleanups) await c();
  });

  async function project(extra = ""): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), "recruit-sync-probe-cli-"));
    dirs.push(dir);
    const redis = await withTestRedis();
    cleanups.push(redis.cleanup);
    const configDir = path.join(dir, "config");
    await mkdir(configDir);
    await writeFile(
      path.join(configDir, "default.yaml"),
      `service:
  baseUrl: http://127.0.0.1:9/api/public/v1
redis:
  url: ${REDIS_URL}
  prefix: ${redis.prefix}
warehouse:
  url: duckdb:./data/warehouse.duckdb
paths:
  jobsDir: ${REPO_JOBS}
  dataDir: ./data
log:
  level: info
ops:
  port: 0
${extra}`,
    );
    return configDir;
  }

  /** Starts the command and resolves with the probe address it prints (ops) or logs (worker --ops). */
  function start(args: string[]): Promise<{ child: ChildProcess; probeUrl: string }> {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, NODE_ENV: "", RECRUIT_SYNC_CONFIG_DIR: "", RECRUIT_SYNC_OPS_PASSWORD: PASSWORD },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    return new Promise((resolve, reject) => {
      const look = (d: Buffer) => {
        out += d;
        const m = /probe(?:s |Url":")(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m?.[1]) resolve({ child, probeUrl: m[1] });
      };
      child.stdout?.on("data", look);
      child.stderr?.on("data", look);
      child.once("exit", (code) => reject(new Error(`exited ${code} before listening: ${out}`)));
    });
  }

  async function stop(child: ChildProcess): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    return exited;
  }

  it("`recruit-sync ops --probe-port 0` serves /readyz and /metrics without the password", async () => {
    const configDir = await project();
    const { child, probeUrl } = await start(["--config", configDir, "ops", "--probe-port", "0"]);
    try {
      expect((await call(`${probeUrl}/readyz`)).status).toBe(200);
      expect((await call(`${probeUrl}/metrics`)).status).toBe(200);
      expect((await call(`${probeUrl}/api/jobs`)).status).toBe(404);
    } finally {
      expect(await stop(child)).toBe(0);
    }
  });

  it("`recruit-sync worker --ops --probe-port 0` does the same beside the worker", async () => {
    const configDir = await project();
    const { child, probeUrl } = await start([
      "--config",
      configDir,
      "worker",
      "--ops",
      "--no-schedules",
      "--probe-port",
      "0",
    ]);
    try {
      expect((await call(`${probeUrl}/readyz`)).status).toBe(200);
      expect((await call(`${probeUrl}/metrics`)).status).toBe(200);
      expect((await call(`${probeUrl}/ui/`)).status).toBe(404);
    } finally {
      expect(await stop(child)).toBe(0);
    }
  });

  it("`recruit-sync worker --ops --ops-port N --ops-host H` serves the ops port there", async () => {
    const configDir = await project();
    const opsPort = await freePort();
    const { child } = await start([
      "--config",
      configDir,
      "worker",
      "--ops",
      "--no-schedules",
      "--ops-port",
      String(opsPort),
      "--ops-host",
      "127.0.0.1",
      "--probe-port",
      "0",
    ]);
    try {
      expect((await call(`http://127.0.0.1:${opsPort}/healthz`)).status).toBe(200);
      expect((await call(`http://127.0.0.1:${opsPort}/api/jobs`, { headers: AUTH })).status).toBe(200);
    } finally {
      expect(await stop(child)).toBe(0);
    }
  });

  it("`recruit-sync worker --ops` without the password refuses before it touches Redis", async () => {
    const configDir = await project();
    const yaml = path.join(configDir, "default.yaml");
    // A Redis that is not there: the password must be what the one line is about.
    await writeFile(yaml, (await readFile(yaml, "utf8")).replace(REDIS_URL, "redis://127.0.0.1:1"));
    const r = await runCli(["--config", configDir, "worker", "--ops"], {
      env: { RECRUIT_SYNC_OPS_PASSWORD: "" },
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("RECRUIT_SYNC_OPS_PASSWORD");
    expect(r.stderr).not.toMatch(/redis/i);
    const flags = await runCli(["--config", configDir, "worker", "--ops-port", "4030"]);
    expect(flags.code).toBe(2);
    expect(flags.stderr).toContain("--ops-port belongs to the ops server: give --ops too");
  });

  it("takes the probe port from ops.probePort in the configuration", async () => {
    const configDir = await project("  probePort: 0\n");
    const { child, probeUrl } = await start(["--config", configDir, "ops"]);
    try {
      expect((await call(`${probeUrl}/metrics`)).status).toBe(200);
    } finally {
      expect(await stop(child)).toBe(0);
    }
  });

  it("refuses --probe-port on a worker without --ops, and a port that is not one", async () => {
    const configDir = await project();
    const worker = await runCli(["--config", configDir, "worker", "--probe-port", "4021"]);
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain("--probe-port belongs to the ops server: give --ops too");
    const ops = await runCli(["--config", configDir, "ops", "--probe-port", "http"], {
      env: { RECRUIT_SYNC_OPS_PASSWORD: PASSWORD },
    });
    expect(ops.code).toBe(2);
    expect(ops.stderr).toContain("--probe-port http: give a port number from 0 to 65535");
  });

  it("reads the probe port and host from RECRUIT_SYNC_OPS_PROBE_PORT and RECRUIT_SYNC_OPS_PROBE_HOST", async () => {
    const configDir = await project();
    const config = loadConfig({
      configDir,
      env: { RECRUIT_SYNC_OPS_PROBE_PORT: "4021", RECRUIT_SYNC_OPS_PROBE_HOST: "0.0.0.0" },
    });
    expect(config.ops).toMatchObject({ port: 0, probePort: 4021, probeHost: "0.0.0.0" });
    expect(loadConfig({ configDir, env: {} }).ops.probePort).toBeUndefined();
  });

  it("refuses a probe port equal to the ops port", async () => {
    const configDir = await project("  probePort: 4020\n");
    const r = await runCli(["--config", configDir, "ops"], {
      env: { RECRUIT_SYNC_OPS_PASSWORD: PASSWORD, NODE_ENV: "", RECRUIT_SYNC_OPS_PORT: "4020" },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ops.probePort");
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

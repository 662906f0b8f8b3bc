import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Logger } from "pino";
import { RuntimeConfig } from "../../src/config/index.ts";
import { createLogger } from "../../src/logger/index.ts";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { type RunningWorker, startWorker } from "../../src/queue/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { withTestRedis } from "../helpers/redis.ts";

export const REPO_JOBS = path.resolve(import.meta.dirname, "../../jobs");
export const SAMPLES = path.resolve(import.meta.dirname, "../../samples");
export const PASSWORD = "correct horse battery staple";

export interface OpsProject {
  config: RuntimeConfig;
  logger: Logger;
  /** Every log line written so far, as text. */
  logText(): string;
  dir: string;
  /** `<dir>/incoming`, the project's imports.roots: files the ops API may name (made on demand). */
  incoming: string;
  prefix: string;
  cleanup(): Promise<void>;
}

export interface OpsProjectOptions {
  /** false turns basic auth off; default on with PASSWORD. */
  auth?: boolean;
  baseUrl?: string;
  token?: string;
  redisUrl?: string;
  warehouse?: string;
}

/**
 * A configuration of its own for one test: a `test-<uuid>` Redis prefix, a
 * temporary data folder and warehouse, the repo's jobs/, the ops server on a
 * free loopback port, and a logger whose lines the test can read.
 */
export async function withOpsProject(options: OpsProjectOptions = {}): Promise<OpsProject> {
  const testRedis = await withTestRedis();
  const dir = await mkdtemp(path.join(os.tmpdir(), "recruit-sync-ops-"));
  const config = RuntimeConfig.parse({
    service: {
      baseUrl: options.baseUrl ?? "http://127.0.0.1:9/api/public/v1",
      ...(options.token ? { token: options.token } : {}),
      retry: { maxAttempts: 5, baseDelayMs: 50, maxDelayMs: 3000 },
    },
    redis: { url: options.redisUrl ?? REDIS_URL, prefix: testRedis.prefix },
    warehouse: { url: options.warehouse ?? `duckdb:${path.join(dir, "warehouse.duckdb")}` },
    paths: { jobsDir: REPO_JOBS, dataDir: path.join(dir, "data") },
    imports: { roots: [path.join(dir, "incoming")] },
    queue: { attempts: 1, backoffMs: 100, shutdownDeadlineMs: 5000, lockMs: 5000 },
    ops: {
      host: "127.0.0.1",
      port: 0,
      auth: options.auth ?? true,
      user: "ops",
      ...(options.auth === false ? {} : { password: PASSWORD }),
    },
    log: { level: "info" },
  });
  const lines: string[] = [];
  const logger = createLogger({
    level: "info",
    name: "ops-test",
    destination: { write: (line: string) => void lines.push(line) },
  });
  return {
    config,
    logger,
    logText: () => lines.join(""),
    dir,
    incoming: path.join(dir, "incoming"),
    prefix: testRedis.prefix,
    async cleanup() {
      await testRedis.cleanup();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A Basic authorization header. */
export function basic(user: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` };
}

export const AUTH = basic("ops", PASSWORD);

/** fetch() with JSON in and out. */
export async function call(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...(init.headers ?? {}),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    redirect: "manual",
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body, text };
}

/** The emulator, a project of its own, a worker and the ops server over it, as most console tests need them. */
export interface OpsStack {
  emu: TestEmulator;
  project: OpsProject;
  worker: RunningWorker;
  ops: OpsServer;
  close(): Promise<void>;
}

/** Starts an OpsStack (schedules and watched folders off); close it in afterAll. */
export async function startOpsStack(): Promise<OpsStack> {
  const emu = await startTestEmulator();
  const project = await withOpsProject({ baseUrl: emu.baseUrl, token: emu.token });
  const worker = await startWorker({
    config: project.config,
    logger: project.logger,
    schedules: false,
    watch: false,
  });
  const ops = await startOpsServer({ config: project.config, logger: project.logger, queues: worker.queues });
  return {
    emu,
    project,
    worker,
    ops,
    async close() {
      await ops.close();
      await worker.stop();
      await emu.close();
      await project.cleanup();
    },
  };
}

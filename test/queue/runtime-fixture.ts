import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { loadConfig } from "../../src/config/index.ts";
import type { RuntimeConfig } from "../../src/config/runtime-config.ts";
import { deleteKeysByPrefix } from "../../src/runtime/delete-keys.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { withTestRedis } from "../helpers/redis.ts";

export const repoJobs = path.resolve("jobs");

export interface TestProject {
  dir: string;
  configDir: string;
  prefix: string;
  config: RuntimeConfig;
  /** Environment for a CLI child using this project. */
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/**
 * A project folder of its own: config/default.yaml with a `test-<uuid>`
 * Redis prefix, data under the folder, jobs from the repo unless given.
 */
export async function testProject(options: {
  baseUrl: string;
  token?: string;
  jobsDir?: string;
  yaml?: string;
}): Promise<TestProject> {
  const dir = await mkdtemp(path.join(tmpdir(), "recruit-sync-project-"));
  const configDir = path.join(dir, "config");
  await mkdir(configDir);
  const prefix = `test-${randomUUID()}`;
  await writeFile(
    path.join(configDir, "default.yaml"),
    [
      `service: { baseUrl: "${options.baseUrl}", retry: { maxAttempts: 3, baseDelayMs: 50, maxDelayMs: 500 } }`,
      `redis: { url: "${REDIS_URL}", prefix: "${prefix}" }`,
      "warehouse: { url: duckdb:./data/warehouse.duckdb }",
      `paths: { jobsDir: "${options.jobsDir ?? repoJobs}", dataDir: ./data }`,
      "log: { level: silent }",
      options.yaml ?? "",
    ].join("\n"),
  );
  const token = options.token ?? "test-token";
  const config = loadConfig({ configDir, env: { RECRUIT_SYNC_API_TOKEN: token } });
  return {
    dir,
    configDir,
    prefix,
    config,
    env: { RECRUIT_SYNC_API_TOKEN: token, RECRUIT_SYNC_CONFIG_DIR: configDir, NODE_ENV: "", REDIS_URL },
    async cleanup() {
      const r = await withTestRedis();
      // Remove this project's keys (BullMQ's and ours share the prefix).
      await deleteKeysByPrefix(r.redis, prefix);
      await r.cleanup();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export const silentLogger = pino({ level: "silent" });

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Helpers of the queue's fault tests: a throwaway redis-server, a temp project
 * (config/, jobs/, data/), worker child processes, polls that wait for a
 * condition, and readers of what ended up where (emulator, queue, DuckDB).
 */
import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import type { Job, Queue } from "bullmq";
import { afterEach, beforeEach } from "vitest";
import { stringify as toYaml } from "yaml";
import { loadConfig, type RuntimeConfig } from "../../src/config/index.ts";
import {
  enqueueExport,
  enqueueImport,
  openQueues,
  type Queues,
  queueConnection,
} from "../../src/queue/index.ts";
import { startTestEmulator, type TestEmulator, type TestEmulatorOptions } from "../helpers/emulator.ts";
import { respawnRedisOn, spawnOwnRedis } from "../helpers/redis-process.ts";

export const ROOT = path.resolve(import.meta.dirname, "../..");
const CLI = path.join(ROOT, "bin/recruit-sync.mjs");

/**
 * Import requests a run has in flight at once: what a killed run may have sent
 * without recording it in the ledger, and so sends again: config
 * `imports.concurrency`, two by default.
 */
export const IMPORT_IN_FLIGHT = 2;

// ---------------------------------------------------------------- polling

export interface WaitOptions {
  /** Generous: a deadline that only a broken run reaches. */
  timeoutMs?: number;
  intervalMs?: number;
  /** Appended to the timeout's message, e.g. a worker's stderr. */
  context?: () => string;
}

/** Thrown by a poll's check to stop waiting at once: the awaited state can no longer come. */
export class GiveUp extends Error {}

/**
 * Polls `check` until it returns something other than undefined or false, and
 * returns that. Throws, naming `what`, once `timeoutMs` has passed; a check
 * that throws GiveUp ends the wait at once, other errors are retried.
 */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      if (err instanceof GiveUp) throw new Error(`${err.message}${options.context?.() ?? ""}`);
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}${options.context?.() ?? ""}`);
}

// ---------------------------------------------------------------- redis-server

export interface RedisServer {
  url: string;
  port: number;
  /** Stops it as a restart would (SIGTERM: an AOF server writes its file first); waits for the exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder. */
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  close(): Promise<void>;
}

/**
 * A redis-server of the test's own on a free loopback port. `persistent`
 * keeps the data across a restart (AOF, fsync on every write), as production
 * Redis must; otherwise nothing is written to disk.
 */
export async function startRedisServer(options: { persistent?: boolean } = {}): Promise<RedisServer> {
  const dir = await mkdtemp(path.join(tmpdir(), "faults-redis-"));
  const extra = [
    "--dir",
    dir,
    "--save",
    "",
    ...(options.persistent ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]),
  ];
  let output = "";
  const stdio: StdioOptions = ["ignore", "pipe", "pipe"];
  const keepOutput = (proc: ChildProcess) => {
    proc.stdout?.on("data", (d: Buffer) => {
      output = (output + d.toString()).slice(-4000);
    });
  };
  const first = await spawnOwnRedis(extra, { stdio, onSpawn: keepOutput });
  const port = first.port;
  const url = first.url;
  let child: ChildProcess | undefined = first.child;
  const start = async () => {
    try {
      child = await respawnRedisOn(port, extra, { stdio, onSpawn: keepOutput });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${output}`);
    }
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGTERM");
    await exited;
  };
  return {
    url,
    port,
    stop,
    start,
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------- the project

/** The import definition the tests use: email and first name, small batches. */
export function importJob(batchSize = 50, studyId = "study_2") {
  return {
    kind: "import",
    target: { studyId },
    columns: [
      { column: "Email", to: "email" },
      { column: "First Name", to: "firstName" },
    ],
    batchSize,
  };
}

/** The export definition the tests use: participants of the given studies, pages of `pageSize`. */
export function exportJob(studies: string[], pageSize = 100) {
  return { kind: "export", resources: ["participants"], studies, pageSize };
}

export interface ProjectOptions {
  redisUrl: string;
  emulator: TestEmulator;
  /** The `queue:` section; lockMs 3000 unless given, so a killed worker's job is taken up quickly. */
  queue?: Record<string, unknown>;
  /** The client's retries (`service.retry:`), over the tests' defaults. */
  retry?: Record<string, unknown>;
  /** The `imports:` section. */
  imports?: Record<string, unknown>;
  /** The `exports:` section. */
  exports?: Record<string, unknown>;
  /** The `syncLog:` section. */
  syncLog?: Record<string, unknown>;
  /** The configured warehouse; default the project's data/warehouse.duckdb. */
  warehouse?: string;
  /** jobs/<name>.yaml */
  jobs: Record<string, unknown>;
}

export interface Project {
  dir: string;
  configDir: string;
  prefix: string;
  /** The embedded warehouse: data/warehouse.duckdb. */
  warehouseFile: string;
  config: RuntimeConfig;
  emulator: TestEmulator;
  /** The environment a worker of this project runs with. */
  env: NodeJS.ProcessEnv;
  /** Writes a file into the project (0600) and returns its absolute path. */
  file(name: string, content: string): Promise<string>;
  cleanup(): Promise<void>;
}

/**
 * A temp project as a user would lay one out: config/default.yaml with its
 * own prefix `test-<uuid>`, jobs/, data/. Workers find it with --config.
 */
export async function createProject(options: ProjectOptions): Promise<Project> {
  const dir = await mkdtemp(path.join(tmpdir(), "faults-project-"));
  const configDir = path.join(dir, "config");
  const jobsDir = path.join(dir, "jobs");
  const dataDir = path.join(dir, "data");
  await mkdir(configDir, { recursive: true });
  await mkdir(jobsDir, { recursive: true });
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const prefix = `test-${randomUUID()}`;
  const config = {
    service: {
      baseUrl: options.emulator.baseUrl,
      timeoutMs: 20_000,
      retry: { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 2000, ...options.retry },
    },
    redis: { url: options.redisUrl, prefix },
    warehouse: { url: options.warehouse ?? "duckdb:./data/warehouse.duckdb" },
    paths: { jobsDir: "./jobs", dataDir: "./data" },
    log: { level: "info" },
    queue: {
      attempts: 3,
      backoffMs: 500,
      shutdownDeadlineMs: 20_000,
      lockMs: 3000,
      ...options.queue,
    },
    watch: [],
    ...(options.imports ? { imports: options.imports } : {}),
    ...(options.exports ? { exports: options.exports } : {}),
    ...(options.syncLog ? { syncLog: options.syncLog } : {}),
  };
  await writeFile(path.join(configDir, "default.yaml"), toYaml(config));
  for (const [name, job] of Object.entries(options.jobs)) {
    await writeFile(path.join(jobsDir, `${name}.yaml`), toYaml({ name, ...(job as object) }));
  }
  const env: NodeJS.ProcessEnv = { ...process.env, RECRUIT_SYNC_API_TOKEN: options.emulator.token };
  // The project's config file says where everything is; nothing of the test runner's may stand in.
  for (const k of [
    "REDIS_URL",
    "RECRUIT_SYNC_BASE_URL",
    "RECRUIT_SYNC_WAREHOUSE",
    "RECRUIT_SYNC_CONFIG_DIR",
    "LOG_LEVEL",
    "NODE_ENV",
  ]) {
    delete env[k];
  }
  return {
    dir,
    configDir,
    prefix,
    warehouseFile: path.join(dataDir, "warehouse.duckdb"),
    config: loadConfig({ configDir, env }),
    emulator: options.emulator,
    env,
    async file(name, content) {
      const file = path.join(dir, name);
      await writeFile(file, content, { mode: 0o600 });
      await chmod(file, 0o600);
      return file;
    },
    async cleanup() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A CSV of `n` people nobody else imports: `Email,First Name`, emails `<tag>-<i>@faults.example.org`. */
export function peopleCsv(tag: string, n: number): { csv: string; emails: string[] } {
  const emails = Array.from({ length: n }, (_, i) => `${tag}-${i + 1}@faults.example.org`);
  return { csv: `Email,First Name\n${emails.map((e, i) => `${e},Person ${i + 1}`).join("\n")}\n`, emails };
}

/**
 * The same people with a Notes column (unmapped) that makes the file over
 * 4 MB: read and mapped on the import's parse thread, as large files are.
 */
export function largePeopleCsv(tag: string, n: number): { csv: string; emails: string[] } {
  const notes = "n".repeat(Math.ceil((4.5 * 2 ** 20) / n));
  const emails = Array.from({ length: n }, (_, i) => `${tag}-${i + 1}@faults.example.org`);
  const rows = emails.map((e, i) => `${e},Person ${i + 1},${notes}`);
  return { csv: `Email,First Name,Notes\n${rows.join("\n")}\n`, emails };
}

// ---------------------------------------------------------------- workers

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything it logged (pino JSON lines on stderr). */
  stderr(): string;
  /** The last lines of stderr, for failure messages. */
  tail(): string;
  /** Resolves once it logged "worker started". */
  ready: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `node bin/recruit-sync.mjs --config <project>/config worker`, as ops would run it. */
export function startWorkerProcess(project: Project, name = "worker"): WorkerProcess {
  const child = spawn(process.execPath, [CLI, "--config", project.configDir, "worker"], {
    cwd: project.dir,
    env: project.env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
    if (stderr.includes('"msg":"worker started"')) onReady();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  const tail = () => `\n--- ${name} stderr (last lines) ---\n${stderr.split("\n").slice(-25).join("\n")}`;
  const started = Promise.race([
    ready,
    exited.then(({ code, signal }) => {
      throw new Error(`${name} exited (${code ?? signal}) before it started${tail()}`);
    }),
  ]);
  // A worker that dies before starting must fail the test at the await, not as an unhandled rejection.
  started.catch(() => {});
  return {
    child,
    stderr: () => stderr,
    tail,
    ready: started,
    exited,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

// ---------------------------------------------------------------- the queues

export interface TestQueues {
  queues: Queues;
  importFile(file: string, job: string): Promise<string>;
  exportJob(job: string): Promise<string>;
  /** The job, or undefined when it is not (yet) there. */
  job(queue: "imports" | "exports", id: string): Promise<Job | undefined>;
  state(queue: "imports" | "exports", id: string): Promise<string>;
  counts(queue: "imports" | "exports"): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** The project's queues as `recruit-sync import/export` (without --inline) uses them. */
export function openTestQueues(project: Project): TestQueues {
  const connection = queueConnection(project.config);
  const queues = openQueues(project.config, connection);
  const q = (name: "imports" | "exports"): Queue => queues[name] as unknown as Queue;
  return {
    queues,
    async importFile(file, job) {
      // As `recruit-sync import FILE` enqueues it: named at a shell, signed for the workers.
      return (
        await enqueueImport(project.config, queues, { file, job, origin: "cli" }, { givenAtShell: true })
      ).jobId;
    },
    async exportJob(job) {
      return (await enqueueExport(project.config, queues, { job, origin: "cli" })).jobId;
    },
    async job(name, id) {
      return (await q(name).getJob(id)) ?? undefined;
    },
    async state(name, id) {
      return q(name).getJobState(id);
    },
    async counts(name) {
      return q(name).getJobCounts();
    },
    async close() {
      await queues.close().catch(() => {});
      connection.disconnect();
    },
  };
}

/** Waits for a job to complete; a failed job fails the test at once with its reason. */
export async function waitForCompletion(
  tq: TestQueues,
  queue: "imports" | "exports",
  id: string,
  options: WaitOptions = {},
): Promise<Job> {
  return waitUntil(
    `job ${id} of ${queue} to complete`,
    async () => {
      const job = await tq.job(queue, id);
      if (!job) return undefined;
      const state = await job.getState();
      if (state === "failed") {
        throw new GiveUp(`job ${id} failed: ${(await tq.job(queue, id))?.failedReason ?? job.failedReason}`);
      }
      // Read again: the job may have ended between the first read and getState, with no result in that copy.
      return state === "completed" ? await tq.job(queue, id) : undefined;
    },
    { timeoutMs: 45_000, ...options },
  );
}

/**
 * Waits for a job to fail and returns it read after it failed: a copy read
 * before getState can say nothing of the failure yet (failedReason undefined).
 */
export async function waitForFailure(
  tq: TestQueues,
  queue: "imports" | "exports",
  id: string,
  what: string,
  options: WaitOptions = {},
): Promise<Job> {
  return waitUntil(
    what,
    async () => {
      const job = await tq.job(queue, id);
      return (await job?.getState()) === "failed" ? await tq.job(queue, id) : undefined;
    },
    options,
  );
}

// ---------------------------------------------------------------- what arrived

/** Answers of one route (operationId) with one status, from the emulator's request log. */
export async function answered(emu: TestEmulator, route: string, status = "200"): Promise<number> {
  return (await emu.requests()).byRoute[route]?.[status] ?? 0;
}

/** How many people of the workspace have each of `emails` (ignoring case); 0 when missing. */
export async function peopleByEmail(
  emu: TestEmulator,
  emails: readonly string[],
): Promise<Map<string, number>> {
  const wanted = new Map(emails.map((e) => [e.toLowerCase(), 0]));
  for (const p of (await emu.snapshot()).people) {
    const e = p.email?.toLowerCase();
    if (e !== undefined && wanted.has(e)) wanted.set(e, (wanted.get(e) ?? 0) + 1);
  }
  return wanted;
}

/** Every email imported, each exactly once: the list of those that are not. */
export async function notExactlyOnce(emu: TestEmulator, emails: readonly string[]): Promise<string[]> {
  const counts = await peopleByEmail(emu, emails);
  return [...counts].filter(([, n]) => n !== 1).map(([e, n]) => `${e}×${n}`);
}

/** The participant ids of a study, from the emulator's snapshot (not counted as requests). */
export async function participantIds(emu: TestEmulator, studyId: string): Promise<string[]> {
  return (await emu.snapshot()).participants.filter((p) => p.studyId === studyId).map((p) => p.participantId);
}

export interface WarehouseContent {
  participants: { participantId: string; deleted: boolean }[];
  runs: { runId: string; resource: string; status: string; pages: number; rows: number }[];
}

/** Reads the DuckDB warehouse file (read-only: call it once no worker has it open). */
export async function readWarehouse(file: string): Promise<WarehouseContent> {
  const instance = await DuckDBInstance.create(file, { access_mode: "READ_ONLY" });
  const db = await instance.connect();
  try {
    const participants = (
      await (await db.runAndReadAll("SELECT participant_id, _deleted_at FROM participants")).getRowObjectsJS()
    ).map((r) => ({ participantId: String(r.participant_id), deleted: r._deleted_at !== null }));
    const runs = (
      await (
        await db.runAndReadAll(
          "SELECT run_id, resource, status, pages, rows FROM sync_runs ORDER BY started_at, run_id",
        )
      ).getRowObjectsJS()
    ).map((r) => ({
      runId: String(r.run_id),
      resource: String(r.resource),
      status: String(r.status),
      pages: Number(r.pages),
      rows: Number(r.rows),
    }));
    return { participants, runs };
  } finally {
    db.closeSync();
    instance.closeSync();
  }
}

/** Adds `n` people to a study by importing them in-process (setup, not under test). */
export async function addParticipants(emu: TestEmulator, studyId: string, tag: string, n: number) {
  for (let start = 0; start < n; start += 1000) {
    const people = Array.from({ length: Math.min(1000, n - start) }, (_, i) => ({
      email: `${tag}-${start + i + 1}@participants.example.org`,
    }));
    await emu.client.importParticipants(studyId, { people });
  }
  await emu.admin("/requests", { method: "DELETE" });
}

// ---------------------------------------------------------------- the harness

/** What a fault test works with; `project`, `tq` and `workers` are the test's to set, the harness cleans them up. */
export interface FaultHarness {
  redis: RedisServer;
  emu: TestEmulator;
  project: Project | undefined;
  tq: TestQueues | undefined;
  workers: WorkerProcess[];
}

/**
 * Every fault test's lifecycle: a `redis-server` of its own and an emulator
 * before each test; after it, its workers killed, its queues closed, the
 * emulator, Redis and the project folder gone.
 */
export function faultHarness(
  options: { persistentRedis?: boolean; emulator?: TestEmulatorOptions } = {},
): FaultHarness {
  const h = { project: undefined, tq: undefined, workers: [] } as unknown as FaultHarness;
  beforeEach(async () => {
    h.redis = await startRedisServer({ persistent: options.persistentRedis === true });
    h.emu = await startTestEmulator(options.emulator);
  });
  afterEach(async () => {
    for (const w of h.workers.splice(0)) w.kill("SIGKILL");
    await h.tq?.close();
    await h.emu.close();
    await h.redis.close();
    await h.project?.cleanup();
    h.project = undefined;
    h.tq = undefined;
  });
  return h;
}

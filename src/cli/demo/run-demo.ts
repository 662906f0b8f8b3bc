import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { Redis } from "ioredis";
import pino from "pino";
import type { ExportJobDefinition } from "../../config/export-job.ts";
import { type RuntimeConfig, readJobFile } from "../../config/index.ts";
import { type RunningEmulator, startEmulator } from "../../emulator/index.ts";
import { ConfigError, RecruitSyncError } from "../../errors/index.ts";
import { createLogger } from "../../logger/index.ts";
import type { OpsServer } from "../../ops/index.ts";
import { type FleetCounters, type RunningWorker, readFleetCounters, startWorker } from "../../queue/index.ts";
import { deleteKeysByPrefix } from "../../runtime/delete-keys.ts";
import { DEMO_DIR, DEMO_EXPORT_JOB, demoConfig } from "./demo-config.ts";
import { type DemoRedis, ensureRedis } from "./ensure-redis.ts";
import { ensureWarehouseFolder, forgetEmailCursor, liveRowsPerTable } from "./warehouse-view.ts";
import { type EnqueuedByHand, runCliWay } from "./way-cli-enqueue.ts";
import { runSchedulerWay, type ScheduledExport } from "./way-scheduler.ts";
import { type FiledSample, runWatchedFolderWay, shortPath } from "./way-watched-folder.ts";

export interface DemoOptions {
  /** Project folder holding config/, jobs/ and samples/; default cwd. */
  root?: string;
  /** Warehouse URL; default the configuration's (duckdb:./data/warehouse.duckdb). */
  warehouse?: string;
  /** Emulator port; default a free one. */
  port?: number;
  /** Ops server port; default ops.port (4020), or a free one when that is taken. */
  opsPort?: number;
  /** Start a throwaway redis-server even when one answers (tests of that path). */
  throwawayRedis?: boolean;
  /** REDIS_URL as the demo sees it; default the environment's. */
  redisUrl?: string | undefined;
  /** How long a way may take before the demo gives up; default 120 s. */
  wayTimeoutMs?: number;
  out?: (line: string) => void;
  signal?: AbortSignal;
}

export interface DemoResult {
  root: string;
  emulator: RunningEmulator;
  redis: DemoRedis;
  config: RuntimeConfig;
  dashboardUrl: string;
  /** Way 1: each sample as it was filed. */
  watched: FiledSample[];
  /** Way 2: the scheduler's run. */
  scheduled: ScheduledExport;
  /** Way 3: the job enqueued by hand. */
  byHand: EnqueuedByHand;
  /** Whether an earlier run's email cursor was removed from the warehouse first. */
  cursorReset: boolean;
  /** Live rows per table after the export. */
  tables: Record<string, number>;
  /** What the worker counted: responses by operation and status, budget waits. */
  counters: FleetCounters;
  wallMs: number;
  /** Stops the ops server, the worker, the emulator and any Redis the demo started; removes the run's keys. */
  stop(): Promise<void>;
}

async function openOps(config: RuntimeConfig, worker: RunningWorker, logger: pino.Logger, port?: number) {
  // fastify and bull-board load here only: other commands start without them.
  const { startOpsServer } = await import("../../ops/index.ts");
  const start = (p: number) => startOpsServer({ config, logger, queues: worker.queues, port: p });
  if (port !== undefined) return start(port);
  // 4020 is the dashboard's usual address; when something else holds it the demo still shows one.
  return start(config.ops.port).catch((err: unknown) => {
    if (err instanceof ConfigError && /EADDRINUSE|EACCES/.test(err.message)) return start(0);
    throw err;
  });
}

async function removeKeys(url: string, prefix: string): Promise<void> {
  const r = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  r.on("error", () => {});
  try {
    await r.connect();
    await deleteKeysByPrefix(r, `${prefix}:`);
  } catch {
    // A Redis gone by now keeps nothing of ours worth removing.
  } finally {
    r.disconnect();
  }
}

/**
 * The embedded default, end to end, the three ways work reaches
 * recruit-sync: the seeded emulator as the service, a Redis (REDIS_URL, the
 * local one, or a throwaway redis-server), the queue worker and the ops
 * server in this process; then the samples dropped into watched folders
 * (way 1), the nightly export's scheduler run now (way 2), and an import
 * enqueued as the CLI does (way 3). data/demo/ is the demo's own and is
 * cleared at each start, so a second run repeats the first.
 *
 * @example
 * const demo = await runDemo({ out: console.log });
 * console.log(demo.dashboardUrl, demo.tables);
 * await demo.stop();
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const started = Date.now();
  const root = path.resolve(options.root ?? ".");
  const out = options.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const signal = options.signal;
  const demoDir = path.join(root, DEMO_DIR);
  await rm(demoDir, { recursive: true, force: true });
  await mkdir(demoDir, { recursive: true, mode: 0o700 });

  const exportJob = await readJobFile(path.join(root, "jobs", `${DEMO_EXPORT_JOB}.yaml`));
  if (!exportJob.ok || exportJob.definition.kind !== "export") {
    throw new ConfigError(`jobs/${DEMO_EXPORT_JOB}.yaml is invalid: run 'recruit-sync jobs validate'`);
  }
  const exportDefinition: ExportJobDefinition = exportJob.definition;

  const closers: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  };
  try {
    const redis = await ensureRedis({
      envUrl: "redisUrl" in options ? options.redisUrl : process.env.REDIS_URL,
      ...(options.throwawayRedis ? { forceThrowaway: true } : {}),
    });
    closers.push(() => redis.stop());
    const emulator = await startEmulator({ port: options.port ?? 0 });
    closers.push(() => emulator.close());
    const config = demoConfig({
      root,
      serviceBaseUrl: emulator.baseUrl,
      token: emulator.tokens[0]?.token ?? "",
      redisUrl: redis.url,
      warehouse: options.warehouse,
      opsPort: options.opsPort ?? 4020,
    });
    closers.push(() => removeKeys(redis.url, config.redis.prefix));
    const logFile = path.join(demoDir, "demo.log");
    const logDestination = pino.destination({ dest: logFile, sync: true, mode: 0o600 } as never);
    const logger = createLogger({
      level: config.log.level === "silent" ? "silent" : "info",
      name: "demo",
      destination: logDestination,
    });

    out(`emulator   ${emulator.baseUrl}  (seeded; token ${emulator.tokens[0]?.token ?? "none"})`);
    if (emulator.adminToken !== undefined) {
      // The emulator stays up after the demo: its admin API (every person, unmasked) takes this token.
      out(`           admin API ${emulator.origin}/__emulator  (admin token ${emulator.adminToken})`);
    }
    out(
      `redis      ${redis.url}${
        redis.source === "started"
          ? " (a redis-server started for the demo: nothing kept on disk, stopped at the end)"
          : redis.source === "REDIS_URL"
            ? " (REDIS_URL)"
            : " (the local default)"
      }${redis.passedOver ? `; REDIS_URL ${redis.passedOver} did not answer` : ""}; keys under ${config.redis.prefix}:*`,
    );
    await ensureWarehouseFolder(config.warehouse.url);
    const worker = await startWorker({ config, logger });
    closers.push(() => worker.stop());
    out(`worker     in this process: queues imports and exports; log in ${shortPath(logFile)}`);
    const ops: OpsServer = await openOps(config, worker, logger, options.opsPort);
    closers.push(() => ops.close());
    out(
      `dashboard  ${ops.dashboardUrl}  (no login: the demo turns basic auth off as it listens on 127.0.0.1 only)`,
    );

    const wayTimeout = options.wayTimeoutMs ?? 120_000;
    /** Runs a way with a deadline; past it the way is aborted (its job polling stops) and the demo fails with one line. */
    const within = async <T>(run: (signal: AbortSignal) => Promise<T>, what: string): Promise<T> => {
      const late = AbortSignal.timeout(wayTimeout);
      try {
        return await run(signal ? AbortSignal.any([signal, late]) : late);
      } catch (err) {
        if (!late.aborted || signal?.aborted) throw err;
        throw new RecruitSyncError(
          "job_failed",
          `${what} did not finish within ${wayTimeout / 1000} s: see ${shortPath(logFile)} and the dashboard`,
          { cause: err },
        );
      }
    };

    out("");
    out("way 1 — the watched folder: a file dropped in is imported, then filed in processed/ or failed/");
    const watched = await runWatchedFolderWay(config, root, out, {
      timeoutMs: wayTimeout,
      ...(signal ? { signal } : {}),
    });

    out("");
    out(`way 2 — the schedule: jobs/${DEMO_EXPORT_JOB}.yaml's job scheduler, run now`);
    const cursorReset = await forgetEmailCursor(config.warehouse.url, exportDefinition);
    if (cursorReset)
      out("  the warehouse's email cursor came from an earlier demo's emulator: removed, rows kept");
    const scheduled = await within(
      (wayed) => runSchedulerWay(config, worker.queues, out, wayed),
      "the scheduled export",
    );

    out("");
    out("way 3 — by hand: a job enqueued as the CLI does, then followed");
    const byHand = await within(
      (wayed) => runCliWay(config, worker.queues, root, out, wayed),
      "the import enqueued by hand",
    );

    const tables = await liveRowsPerTable(config.warehouse.url);
    const statusRedis = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    statusRedis.on("error", () => {});
    const counters = await readFleetCounters(statusRedis, config.redis.prefix).finally(() =>
      statusRedis.disconnect(),
    );

    return {
      root,
      emulator,
      redis,
      config,
      dashboardUrl: ops.dashboardUrl,
      watched,
      scheduled,
      byHand,
      cursorReset,
      tables,
      counters,
      wallMs: Date.now() - started,
      stop: async () => {
        await stop();
        logDestination.flushSync?.();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

import { randomUUID } from "node:crypto";
import os from "node:os";
import { type Job, Worker } from "bullmq";
import type { Logger } from "pino";
import type { RuntimeConfig } from "../config/index.ts";
import { RedisGoneError } from "../errors/index.ts";
import { joinFleet } from "../runtime/fleet-identity.ts";
import { checkServiceBaseUrl, connectRedis, REDIS_GAVE_UP, safeRedisUrl } from "../runtime/index.ts";
import { createExportProcessor } from "./export-processor.ts";
import { watchFleet } from "./fleet-watch.ts";
import { type FolderWatcher, watchFolders } from "./folder-watcher.ts";
import { createImportProcessor, type ProcessorContext } from "./import-processor.ts";
import { LEASE_LOST, REDIS_LOST } from "./job-outcome.ts";
import { openQueues, QUEUE_NAMES, type Queues, queueConnection, workerOptions } from "./queues.ts";
import { type ReconcileResult, reconcileSchedulers } from "./schedulers.ts";
import { schedulePurge } from "./sync-log-purge.ts";

export interface StartWorkerOptions {
  config: RuntimeConfig;
  logger: Logger;
  /** Run the schedulers' reconciliation and the folder watchers (default true). */
  schedules?: boolean;
  watch?: boolean;
}

export interface RunningWorker {
  queues: Queues;
  workers: { imports: Worker; exports: Worker };
  schedules: ReconcileResult | undefined;
  watcher: FolderWatcher | undefined;
  /**
   * Stops taking jobs, interrupts the running ones (they checkpoint and go
   * back to the queue), then closes workers, watchers, queues and Redis in
   * reverse order. Gives up waiting after the configured deadline.
   */
  stop(): Promise<{ clean: boolean }>;
  /**
   * Resolves once Redis has not answered for `redis.giveUpAfterMs`: the worker
   * has then stopped (its jobs go back to the queue, or are taken up after
   * their lock lapses) and the process is to exit with the error's one line.
   */
  gone: Promise<RedisGoneError>;
}

/**
 * The queue runtime of one process: a worker on each queue, the job
 * schedulers reconciled with jobs/, and the watched folders. Any number of
 * these processes, on any number of machines, share one Redis: the queues,
 * the rate budget, the ledger and the run locks are all there.
 */
export async function startWorker(options: StartWorkerOptions): Promise<RunningWorker> {
  const { config, logger } = options;
  // A base URL without /api/public/v1 would fail every job with "not found": refuse to start instead.
  checkServiceBaseUrl(config.service.baseUrl);
  // Fails fast, with one line, when Redis is not there at start; later outages are ridden out.
  const redis = await connectRedis(config, "the queues, the rate budget and the ledger live there");
  // Refuses, before taking a job, to join workers that use another service or token under this prefix.
  const membership = await joinFleet(
    redis,
    config,
    `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
  ).catch((err: unknown) => {
    redis.disconnect();
    throw err;
  });
  const connection = queueConnection(config);
  const queues = openQueues(config, connection);
  let stopping = false;
  let gaveUp = false;
  // A shutdown lets runs wait for the answers of requests already sent, until shortly before its deadline.
  const abandon = new AbortController();
  const ctx: ProcessorContext = {
    config,
    redis,
    logger,
    stopping: () => stopping,
    abandon: abandon.signal,
  };

  const common = workerOptions(config, connection);
  const imports = new Worker(
    QUEUE_NAMES.imports,
    createImportProcessor(ctx, () => queues.imports),
    {
      ...common,
      concurrency: config.queue.concurrency.imports,
    },
  );
  const exports = new Worker(
    QUEUE_NAMES.exports,
    createExportProcessor(ctx, () => queues.exports),
    {
      ...common,
      concurrency: config.queue.concurrency.exports,
    },
  );
  for (const w of [imports, exports]) {
    // Once Redis is given up on, its connections' errors say nothing more than the one line that ends the process.
    w.on("error", (err) => {
      if (!gaveUp) logger.error({ queue: w.name, err: err.message }, "worker error");
    });
    w.on("completed", (job: Job) => logger.info({ queue: w.name, jobId: job.id }, "job completed"));
    // Said by the processor (job-outcome.ts), once, with its code, at error level when it is final.
    w.on("failed", (job: Job | undefined, err: Error) =>
      logger.debug({ queue: w.name, jobId: job?.id, err: err.message.slice(0, 300) }, "job failed"),
    );
    // Redis answered that the lock is not ours: the job is back in the queue (or with another worker).
    w.on("lockRenewalFailed", (jobIds: string[]) => {
      for (const jobId of jobIds) {
        logger.warn({ queue: w.name, jobId }, "job lease ran out: stopping its run");
        w.cancelJob(jobId, LEASE_LOST);
      }
    });
  }

  let schedules: ReconcileResult | undefined;
  const reconcile = async () => {
    schedules = await reconcileSchedulers(config, queues.exports, logger);
  };
  if (options.schedules !== false) await reconcile();
  let watcher: FolderWatcher | undefined;
  if (options.watch !== false && config.watch.length > 0) {
    watcher = watchFolders(config, queues, config.watch, logger);
    await watcher.ready;
  }
  // Schedules edited in jobs/ are taken up without a restart, and come back after Redis lost them.
  const reconciler =
    options.schedules === false
      ? undefined
      : setInterval(() => {
          reconcile().catch((err: unknown) =>
            logger.warn(
              { err: err instanceof Error ? err.message : String(err) },
              "reconciling schedules failed",
            ),
          );
        }, config.queue.reconcileMs);
  reconciler?.unref();
  const stopPurge = options.schedules === false ? () => {} : schedulePurge(config, redis, logger);
  const fleet = watchFleet({
    membership,
    everyMs: config.queue.heartbeatMs,
    logger,
    prefix: config.redis.prefix,
    async onLost() {
      if (options.schedules !== false) await reconcile();
      // Each run looks for its job; one Redis lost is enqueued again from this worker's copy (job-outcome.ts).
      imports.cancelAllJobs(REDIS_LOST);
      exports.cancelAllJobs(REDIS_LOST);
      await watcher?.rescan();
    },
  });
  // After a reconnect, at once: a Redis restarted without persistence is noticed before the next tick.
  redis.on("ready", fleet.beatNow);
  logger.info(
    {
      redis: safeRedisUrl(config.redis.url),
      prefix: config.redis.prefix,
      service: config.service.baseUrl,
      concurrency: config.queue.concurrency,
      watching: config.watch.length,
    },
    "worker started",
  );

  let stopped: Promise<{ clean: boolean }> | undefined;
  async function stop(): Promise<{ clean: boolean }> {
    stopping = true;
    logger.info(
      { deadlineMs: config.queue.shutdownDeadlineMs },
      "worker stopping: jobs checkpoint and go back to the queue",
    );
    if (reconciler) clearInterval(reconciler);
    stopPurge();
    redis.off("ready", fleet.beatNow);
    await fleet.stop();
    await watcher?.close();
    const closing = Promise.all([imports.close(), exports.close()]);
    imports.cancelAllJobs("the worker is shutting down");
    exports.cancelAllJobs("the worker is shutting down");
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), config.queue.shutdownDeadlineMs);
    });
    // Answers still awaited then are given up: the runs end, record what they have and go back to the queue in time.
    const giveUp = setTimeout(
      () => abandon.abort(new Error("the shutdown deadline is near")),
      answerWaitMs(config.queue.shutdownDeadlineMs),
    );
    const outcome = await Promise.race([closing.then(() => "closed" as const), deadline]);
    clearTimeout(timer);
    clearTimeout(giveUp);
    if (outcome === "late") {
      logger.warn("shutdown deadline passed: closing with jobs still running (they resume elsewhere)");
      await Promise.all([imports.close(true), exports.close(true)]).catch(() => {});
    }
    await queues.close().catch(() => {});
    connection.disconnect();
    redis.disconnect();
    logger.info({ clean: outcome === "closed" }, "worker stopped");
    return { clean: outcome === "closed" };
  }

  const gone = new Promise<RedisGoneError>((resolve) => {
    redis.once(REDIS_GAVE_UP, () => {
      gaveUp = true;
      const error = new RedisGoneError(undefined);
      logger.error({ code: error.code }, error.message);
      // BullMQ's connection would wait for Redis without end: it goes first, so stopping cannot hang on it.
      connection.disconnect();
      stopped ??= stop();
      const halting = stopped;
      // Closing asks Redis too: a bounded wait, then the process leaves what is left.
      void Promise.race([halting, new Promise((r) => setTimeout(r, 5000).unref())]).then(() =>
        resolve(error),
      );
    });
  });

  return {
    queues,
    gone,
    workers: { imports, exports },
    get schedules() {
      return schedules;
    },
    watcher,
    stop: () => {
      stopped ??= stop();
      return stopped;
    },
  };
}

/**
 * How long a shutdown's runs wait for the answers of requests already sent:
 * most of the deadline, leaving a fifth (at most 5 s) for the runs to record
 * them and for the jobs to go back to the queue.
 */
export function answerWaitMs(shutdownDeadlineMs: number): number {
  return shutdownDeadlineMs - Math.min(5000, Math.floor(shutdownDeadlineMs / 5));
}

import os from "node:os";
import type { Job, Queue } from "bullmq";
import type { Logger } from "pino";
import type { z } from "zod";
import type { RuntimeConfig } from "../config/index.ts";
import type { ExportProgress } from "../exports/index.ts";
import type { ImportProgress } from "../imports/index.ts";
import type { RedisConnection } from "../runtime/index.ts";
import type { RunContext } from "../runtime/run-context.ts";
import { type JobOrigin, parseJobData } from "./job-data.ts";
import {
  invalidJobData,
  LEASE_LOST,
  messageOnly,
  REDIS_LOST,
  type RecordedFailure,
  settleFailure,
} from "./job-outcome.ts";
import { type JobProgress, progressWriter } from "./job-progress.ts";

export interface ProcessorContext {
  config: RuntimeConfig;
  /** For the governor, the ledger and run locks (not BullMQ's own connection). */
  redis: RedisConnection;
  logger: Logger;
  /** True once the worker has begun to shut down. */
  stopping(): boolean;
  /**
   * Aborted when a shutdown's runs have waited long enough for the answers of
   * requests already sent: shortly before queue.shutdownDeadlineMs.
   */
  abandon?: AbortSignal;
}

/**
 * How a queued job runs: on the worker's Redis connection, named by its job
 * id for the next contender of its lock, after people's work when it came
 * from a schedule, paused rather than held when the budget is spent for
 * long, and counted for the fleet's /metrics.
 */
export function jobRunContext(
  ctx: ProcessorContext,
  job: Job,
  origin: JobOrigin,
  logger: Logger,
  signal: AbortSignal | undefined,
): RunContext {
  return {
    config: ctx.config,
    redis: ctx.redis,
    holder: `job ${job.id} on ${os.hostname()} pid ${process.pid}`,
    // Work a person waits for (CLI, dashboard, dropped files) takes the next slot before scheduled exports.
    priority: origin === "schedule" ? "background" : "interactive",
    pauseBeyondMs: ctx.config.queue.budgetWaitBoundMs,
    countForFleet: true,
    ...(signal ? { signal } : {}),
    ...(ctx.abandon ? { abandon: ctx.abandon } : {}),
    logger,
  };
}

/**
 * A run's progress as its job keeps it: throttled updates while it runs,
 * what it waited on the budget, and the failure a dashboard and `--wait`
 * show. One per job, for the processor and settleFailure alike.
 */
export function jobProgressRecorder(job: Job) {
  const progress = progressWriter(job);
  let budgetWaitMs = 0;
  return {
    /** Hand to the runner: every update of the run, with what it waited so far. */
    onProgress(p: ImportProgress | ExportProgress, waitedMs: number) {
      budgetWaitMs = waitedMs;
      progress.update({ ...p, budgetWaitMs });
    },
    /** The run ended well: its last counts, written now rather than at the next throttle tick. */
    async done(waitedMs: number) {
      budgetWaitMs = waitedMs;
      await progress.flush({ ...progress.current, budgetWaitMs, message: "done" } as JobProgress);
    },
    /** settleFailure's `record`: the failure (or a pause, or a wait for a warehouse) kept in the job's progress. */
    async record(
      failure: RecordedFailure | undefined,
      message?: string,
      waitingUntil?: string,
      lockWaitSince?: string,
    ) {
      await progress.flush({
        ...progress.current,
        budgetWaitMs,
        ...(failure ? { failure } : {}),
        ...(message ? { message } : {}),
        ...(waitingUntil ? { waitingUntil } : {}),
        ...(lockWaitSince ? { lockWaitSince } : {}),
      } as JobProgress);
    },
  };
}

/** What a queue's run function gets besides the job's parsed data. */
export interface JobRun {
  job: Job;
  logger: Logger;
  /** The runner's context for this job (jobRunContext). */
  context: RunContext;
  recorder: ReturnType<typeof jobProgressRecorder>;
}

export interface JobProcessorOptions<S extends z.ZodType<{ origin: JobOrigin }>, R> {
  ctx: ProcessorContext;
  queue: () => Queue;
  /** The job data's schema: data that does not parse fails the job at once, naming every problem. */
  schema: S;
  run: (data: z.infer<S>, run: JobRun) => Promise<R>;
  /** How long a job waits for a warehouse file another program has open (WarehouseFileLockedError); no limit when unset. */
  lockWaitMs?: number;
  /** Called once when the job will not run again (a watched file is filed in failed/). */
  onFinal?: (data: z.infer<S>, failure: RecordedFailure, run: JobRun) => Promise<void>;
}

/**
 * A BullMQ processor around one run: the job's data parsed, the runner's
 * context and progress recorder made, and whatever ended the run turned into
 * what BullMQ should do with the job (settleFailure). Both queues' processors
 * are this with their own `run`.
 */
export function createJobProcessor<S extends z.ZodType<{ origin: JobOrigin }>, R>(
  options: JobProcessorOptions<S, R>,
) {
  const { ctx } = options;
  const processJob = async (job: Job, token?: string, signal?: AbortSignal): Promise<R> => {
    const logger = ctx.logger.child({ jobId: job.id, queue: job.queueName });
    const parsed = parseJobData(options.schema, job.data);
    if (!parsed.ok) {
      logger.warn({ problems: parsed.problems.length }, "job refused: invalid data");
      const refused = invalidJobData(parsed.problems);
      // The code goes where the dashboard and `--wait` read a failure's; BullMQ's own reason stays the one line.
      const failure: RecordedFailure = {
        code: "job_data_invalid",
        message: refused.message,
        retryable: false,
        final: true,
        report: null,
      };
      await job.updateProgress({ kind: "pending", budgetWaitMs: 0, failure }).catch(() => {});
      throw refused;
    }
    const data = parsed.data;
    const run: JobRun = {
      job,
      logger,
      context: jobRunContext(ctx, job, data.origin, logger, signal),
      recorder: jobProgressRecorder(job),
    };
    try {
      return await options.run(data, run);
    } catch (err) {
      // The dashboard gets the message only (messageOnly): the stack is for whoever reads the log.
      logger.debug({ stack: err instanceof Error ? err.stack : String(err) }, "job run ended by an error");
      const onFinal = options.onFinal;
      // Awaited here, not returned: a rejection nobody holds yet ends the process.
      return await settleFailure(err, {
        job,
        token,
        queue: options.queue(),
        logger,
        stopping: ctx.stopping(),
        leaseLost: signal?.reason === LEASE_LOST,
        redisLost: signal?.reason === REDIS_LOST,
        record: run.recorder.record,
        ...(options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs }),
        ...(onFinal ? { onFinal: (failure: RecordedFailure) => onFinal(data, failure, run) } : {}),
      });
    }
  };
  return async (job: Job, token?: string, signal?: AbortSignal): Promise<R> => {
    try {
      return await processJob(job, token, signal);
    } catch (err) {
      throw messageOnly(err);
    }
  };
}

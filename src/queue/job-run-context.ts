import os from "node:os";
import type { Job } from "bullmq";
import type { Logger } from "pino";
import type { RuntimeConfig } from "../config/index.ts";
import type { ExportProgress } from "../exports/index.ts";
import type { ImportProgress } from "../imports/index.ts";
import type { RedisConnection } from "../runtime/index.ts";
import type { RunContext } from "../runtime/run-context.ts";
import type { JobOrigin } from "./job-data.ts";
import type { RecordedFailure } from "./job-outcome.ts";
import { type JobProgress, progressWriter } from "./job-progress.ts";

export interface ProcessorContext {
  config: RuntimeConfig;
  /** For the governor, the ledger and run locks (not BullMQ's own connection). */
  redis: RedisConnection;
  logger: Logger;
  /** True once the worker has begun to shut down. */
  stopping(): boolean;
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
    /** settleFailure's `record`: the failure (or a pause) kept in the job's progress. */
    async record(failure: RecordedFailure | undefined, message?: string, waitingUntil?: string) {
      await progress.flush({
        ...progress.current,
        budgetWaitMs,
        ...(failure ? { failure } : {}),
        ...(message ? { message } : {}),
        ...(waitingUntil ? { waitingUntil } : {}),
      } as JobProgress);
    },
  };
}

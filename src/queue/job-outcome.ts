import { DelayedError, type Job, type Queue, RateLimitError, UnrecoverableError } from "bullmq";
import type { Logger } from "pino";
import { RateLimitedApiError } from "../api/index.ts";
import {
  describeProblems,
  type ErrorCode,
  type Problem,
  RecruitSyncError,
  runFailure,
  WarehouseFileLockedError,
} from "../errors/index.ts";
import { BudgetPausedError, RunLockedError } from "../runtime/index.ts";

/** How long a job waits before trying again when another run holds its lock. */
const LOCKED_RETRY_MS = 5000;

/**
 * The abort reason of a run whose job lease BullMQ refused to renew: the lease
 * ran out (a Redis restart longer than queue.lockMs, a stalled event loop) and
 * the job went back to the queue or to another worker. The run stops at its
 * next checkpoint instead of running to an end whose result would be refused.
 */
export const LEASE_LOST = "the job's lease ran out: it is back in the queue";

/**
 * The abort reason of the runs of a worker that found Redis had lost its data
 * (fleet epoch gone): their jobs may be gone with it. Each run stops and its
 * job is looked for; one that is gone is enqueued again from the worker's copy.
 */
export const REDIS_LOST = "Redis lost its data: the job may be gone with it";

/** A job enqueued again after Redis lost it waits this long, so the run it replaces has ended first. */
const REQUEUE_DELAY_MS = 2000;

/** A failure as a job's progress keeps it, so the dashboard and `--wait` can show the report. */
export interface RecordedFailure {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  final: boolean;
  report: unknown;
}

function find<T>(err: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    if (e instanceof type) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export interface SettleContext {
  job: Job;
  token: string | undefined;
  queue: Queue;
  logger: Logger;
  /** The worker is shutting down: an interrupted job goes back to the queue, untouched. */
  stopping: boolean;
  /** The run was stopped because its job lease ran out (LEASE_LOST): the job is not this worker's any more. */
  leaseLost?: boolean;
  /** The run was stopped because Redis lost its data (REDIS_LOST): its job may be gone. */
  redisLost?: boolean;
  /** Called once when the job will not run again: file a watched file in failed/, say so. */
  onFinal?: (failure: RecordedFailure) => Promise<void>;
  /**
   * Writes the job's progress (and keeps the failure in it); `waitingUntil` while paused for the budget,
   * `lockWaitSince` while waiting for a warehouse file another program has open.
   */
  record: (
    failure: RecordedFailure | undefined,
    message?: string,
    waitingUntil?: string,
    lockWaitSince?: string,
  ) => Promise<void>;
  /** How long a job waits for a warehouse file another program has open; no limit when unset. */
  lockWaitMs?: number;
}

/** "10 min", "45 s": a wait's length as people read it. */
function inWords(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/** When this job began waiting for a held warehouse file: kept in its progress by the tries before this one. */
function lockWaitSince(job: Job): number | undefined {
  const since = (job.progress as { lockWaitSince?: unknown } | null | undefined)?.lockWaitSince;
  const at = typeof since === "string" ? Date.parse(since) : Number.NaN;
  return Number.isNaN(at) ? undefined : at;
}

/**
 * Turns whatever ended a run into what BullMQ should do with the job:
 * - stopped by a shutdown, or another run holds its lock → back to the queue, no attempt spent;
 * - a warehouse file another program has open → back to the queue, no attempt spent, until
 *   `lockWaitMs` has passed since the first such try; then failed for good;
 * - a 429 the client could not ride out → the whole queue waits (queue.rateLimit), no attempt spent;
 * - the shared budget spent for long → delayed until the reset, no attempt spent;
 * - not retryable (bad data, a refused token, a missing file) → failed at once, never retried;
 * - retryable → failed, retried with backoff while attempts remain.
 * Always throws: that is how a processor tells BullMQ.
 */
export async function settleFailure(err: unknown, ctx: SettleContext): Promise<never> {
  const { job, logger } = ctx;
  let failure = runFailure(err, (err as { report?: unknown })?.report);
  // The job's logger names the job and its queue already: a second jobId in one line is a duplicate JSON key.
  const base = { code: failure.code };

  if (ctx.leaseLost || ctx.redisLost) {
    // Moving or failing a job whose lock is gone would be refused: what happens next depends on
    // whether the job is still in Redis at all.
    if (await requeueIfLost(job, ctx.queue, logger)) throw new DelayedError();
    if (ctx.leaseLost) {
      logger.warn(
        base,
        "job lease ran out: this run stops, the job is back in the queue and resumes from its checkpoint",
      );
      throw new DelayedError();
    }
    // Started after Redis lost its data, so still ours: back to the queue, untouched.
    await moveBack(job, Date.now(), ctx);
  }
  if (ctx.stopping && failure.code === "interrupted") {
    logger.info(base, "job interrupted by shutdown: back to the queue, it resumes from its checkpoint");
    await moveBack(job, Date.now(), ctx);
  }
  const locked = find(err, RunLockedError);
  if (locked) {
    logger.info(
      { ...base, holder: locked.holder },
      "another run holds this job's lock: trying again shortly",
    );
    await ctx.record(undefined, `${locked.message}; trying again in ${LOCKED_RETRY_MS / 1000} s`);
    await moveBack(job, Date.now() + LOCKED_RETRY_MS, ctx);
  }
  const held = find(err, WarehouseFileLockedError);
  if (held) {
    // Another program's session may stay open all day: the job waits, saying for what and until when, then fails.
    const now = Date.now();
    const since = lockWaitSince(job) ?? now;
    const limit = ctx.lockWaitMs ?? Number.POSITIVE_INFINITY;
    if (now - since < limit) {
      const until = Number.isFinite(limit)
        ? `, and gives up at ${new Date(since + limit).toISOString()} (exports.lockWaitMs)`
        : "";
      // Said once at warn; each try after is only a debug line.
      logger[since === now ? "warn" : "debug"](
        { ...base, holderPid: held.holder.pid, since: new Date(since).toISOString() },
        "the warehouse file is open in another program: waiting",
      );
      await ctx.record(
        undefined,
        `waiting since ${new Date(since).toISOString()}: ${held.waitingWords()}; it tries every ${LOCKED_RETRY_MS / 1000} s${until}`,
        undefined,
        new Date(since).toISOString(),
      );
      await moveBack(job, now + LOCKED_RETRY_MS, ctx);
    }
    failure = new RecruitSyncError(
      "warehouse_file_locked",
      `gave up after ${inWords(limit)} of waiting (exports.lockWaitMs): ${held.message}`,
      { retryable: false, cause: held, report: failure.report },
    );
  }
  const paused = find(err, BudgetPausedError);
  if (paused) {
    logger.info(
      { ...base, resumeAt: new Date(paused.resumeAt).toISOString() },
      "rate budget spent: job paused",
    );
    const until = new Date(paused.resumeAt).toISOString();
    // waitingUntil as data: `--wait` and the dashboard show the resume time without reading the message.
    await ctx.record(undefined, `waiting for rate budget until ${until}`, until);
    await moveBack(job, paused.resumeAt, ctx);
  }
  const limited = find(err, RateLimitedApiError);
  if (limited) {
    const waitMs = Math.max(1000, limited.retryAfterMs ?? 5000);
    logger.warn({ ...base, waitMs }, "the service kept answering 429: the queue waits");
    await ctx.record(undefined, `rate limited by the service: waiting ${Math.ceil(waitMs / 1000)} s`);
    await ctx.queue.rateLimit(waitMs);
    throw new RateLimitError();
  }

  const attempts = job.opts.attempts ?? 1;
  const final = !failure.retryable || job.attemptsMade + 1 >= attempts;
  const recorded: RecordedFailure = {
    code: failure.code,
    message: failure.message,
    retryable: failure.retryable,
    final,
    report: failure.report,
  };
  await ctx.record(recorded).catch(() => {});
  const attempt = job.attemptsMade + 1;
  if (final) {
    // Said once, at error level: the worker's own "failed" event stays quiet (start-worker.ts).
    logger.error(
      { ...base, retryable: failure.retryable, attempt, attempts, err: failure.message },
      "job failed for good",
    );
  } else {
    const retryInMs = nextAttemptInMs(job);
    logger.warn(
      { ...base, attempt, attempts, ...(retryInMs === undefined ? {} : { retryInMs }), err: failure.message },
      "job failed: it is tried again",
    );
  }
  if (final) await ctx.onFinal?.(recorded);
  if (!failure.retryable) throw new UnrecoverableError(`${failure.code}: ${failure.message}`);
  const again = new Error(`${failure.code}: ${failure.message}`);
  throw again;
}

/** When BullMQ tries a job again after this attempt fails: its backoff (exponential from queue.backoffMs). */
function nextAttemptInMs(job: Job): number | undefined {
  const backoff = job.opts.backoff;
  if (typeof backoff !== "object" || backoff.delay === undefined) return undefined;
  return backoff.type === "exponential" ? backoff.delay * 2 ** job.attemptsMade : backoff.delay;
}

/**
 * Moves the job to delayed until `at` and tells BullMQ so. A refusal means
 * the job's lock is gone — a Redis restart outlasted the lease, or the run
 * lock's loss came with the job's — and the stalled-job check hands the job
 * on: the run ends the same way, without a second error from BullMQ.
 */
async function moveBack(job: Job, at: number, ctx: SettleContext): Promise<never> {
  const { token, logger } = ctx;
  try {
    await job.moveToDelayed(at, token);
  } catch (err) {
    if (!(await requeueIfLost(job, ctx.queue, logger))) {
      logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "job could not be moved back (its lease ran out): it is back in the queue and resumes from its checkpoint",
      );
    }
  }
  throw new DelayedError();
}

/**
 * When Redis lost a job with its data (restarted without persistence,
 * flushed, keys evicted), nothing else will ever run it: this worker still
 * holds its name, data and priority, and enqueues it again under the same id.
 * True when it did. A job still in Redis is left to BullMQ.
 */
async function requeueIfLost(job: Job, queue: Queue, logger: Logger): Promise<boolean> {
  if (!job.id || (await queue.getJob(job.id))) return false;
  await queue.add(job.name, job.data, {
    jobId: job.id,
    ...(job.opts.priority === undefined ? {} : { priority: job.opts.priority }),
    delay: REQUEUE_DELAY_MS,
  });
  logger.error(
    { code: "job_lost" },
    "job lost with Redis's data (Redis restarted without persistence, or evicted keys): enqueued again from this worker's copy; what it had done is not known to Redis any more, so it runs again",
  );
  return true;
}

/** Job data that does not parse: one message naming every problem, and no retry. */
export function invalidJobData(problems: readonly Problem[]): UnrecoverableError {
  return new UnrecoverableError(`invalid job data: ${describeProblems(problems)}`);
}

/**
 * The error as BullMQ should store it: its failedReason and stacktrace are
 * what the dashboard shows, so both are the one-line message and no stack
 * frames (this machine's paths, library internals). The processor logs the
 * stack at debug level first.
 */
export function messageOnly(err: unknown): Error {
  const error = err instanceof Error ? err : new Error(String(err));
  const line = error.message.replace(/\s*\r?\n\s*/g, " ").trim();
  if (line !== error.message) error.message = line;
  error.stack = `${error.name}: ${line}`;
  return error;
}

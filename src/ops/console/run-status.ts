import { realpath } from "node:fs/promises";
import path from "node:path";
import type { Job } from "bullmq";
import type { Redis } from "ioredis";
import type { z } from "zod";
import type { RuntimeConfig } from "../../config/index.ts";
import { JobProgress, plainState, type Queues } from "../../queue/index.ts";
import { readBudget } from "../../runtime/index.ts";
import { OpsHttpError } from "../ops-http-error.ts";
import { runView } from "../queue-views.ts";
import type { RunStatus } from "./api-contract.ts";
import { isDryRun } from "./run-label.ts";
import { batchSizeOf, type RunModelInput, runModel } from "./run-model.ts";

async function jobOf(queues: Queues, queue: "imports" | "exports", jobId: string): Promise<Job> {
  const job = await queues[queue].getJob(jobId);
  if (!job) {
    throw new OpsHttpError(
      404,
      "ops_run_unknown",
      `no job ${jobId} in the ${queue} queue: never enqueued, or no longer kept (queue.keepCompleted, queue.keepFailed)`,
    );
  }
  return job;
}

/** The shared budget for a projection: what is left in this window and when it resets; null without one. */
export async function budgetForProjection(
  config: RuntimeConfig,
  redis: Redis,
): Promise<RunModelInput["budget"]> {
  const state = await readBudget(config, redis).catch(() => undefined);
  if (!state) return null;
  return { remaining: state.remaining ?? null, resetAt: state.resetAt ?? null };
}

/** A job's progress as the worker wrote it, or null when it has written none the schema knows. */
export function progressOf(job: Job): JobProgress | null {
  const parsed = JobProgress.safeParse(job.progress);
  return parsed.success ? parsed.data : null;
}

/** A job's progress model in its state, with when it should finish given the budget (run-model.ts). */
export function modelOf(job: Job, state: string, budget: RunModelInput["budget"], now = Date.now()) {
  return runModel({
    state,
    progress: progressOf(job),
    dryRun: isDryRun(job.data),
    startedAt: job.processedOn ?? undefined,
    now,
    batchSize: batchSizeOf(job.data),
    budget,
  });
}

/**
 * Where a run is, for the page to poll: its state in plain words, its
 * progress (rows, batches, time waiting on the rate budget), when it should
 * finish, and once finished its report or its failure (as GET /api/runs
 * shows finished runs).
 */
export async function runStatus(
  config: RuntimeConfig,
  queues: Queues,
  redis: Redis,
  queue: "imports" | "exports",
  jobId: string,
): Promise<z.input<typeof RunStatus>> {
  const job = await jobOf(queues, queue, jobId);
  const state = await job.getState();
  const progress = progressOf(job);
  const finished = state === "completed" || state === "failed";
  const model = modelOf(job, state, finished ? null : await budgetForProjection(config, redis));
  return {
    ...runView(job, state),
    finished,
    stateInWords: plainState(state),
    progress,
    model,
    message: progress?.message ?? null,
    waitingUntil: progress?.waitingUntil ?? null,
    ...(finished
      ? { projectedFinish: null, projectionBasis: "finished" }
      : { projectedFinish: model.projectedFinish, projectionBasis: model.projectionBasis }),
  };
}

/**
 * The rejects file of a finished import, as its report names it, when it is
 * in this machine's data folder: a report is data from Redis, and must not
 * make the server read any file it names.
 */
export async function rejectsFileOf(config: RuntimeConfig, queues: Queues, jobId: string): Promise<string> {
  const job = await jobOf(queues, "imports", jobId);
  const state = await job.getState();
  const unavailable = (why: string) =>
    new OpsHttpError(404, "ops_rejects_unavailable", `no rejects file for ${jobId}: ${why}`);
  if (state !== "completed" && state !== "failed") throw unavailable(`the run is ${plainState(state)}`);
  const { rejectsFile } = runView(job, state);
  if (!rejectsFile) throw unavailable("no row was rejected");
  const dataDir = await realpath(path.resolve(config.paths.dataDir)).catch(() => undefined);
  const file = await realpath(rejectsFile).catch(() => undefined);
  if (!dataDir || !file?.startsWith(`${dataDir}${path.sep}`)) {
    throw unavailable("the file is not in this machine's data folder (paths.dataDir)");
  }
  return file;
}

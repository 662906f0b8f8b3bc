import type { Job } from "bullmq";
import type { Redis } from "ioredis";
import type { z } from "zod";
import type { RuntimeConfig } from "../../config/index.ts";
import { plainState, type Queues } from "../../queue/index.ts";
import { governorState } from "../queue-views.ts";
import type { BudgetAnswer, BudgetRun } from "./api-contract.ts";
import { isDryRun, runName } from "./run-label.ts";
import { budgetForProjection, modelOf, progressOf } from "./run-status.ts";

/** Runs listed per queue: the page shows a handful, a fleet rarely runs more at once. */
const LISTED = 50;

function runOf(
  job: Job,
  state: string,
  budget: Awaited<ReturnType<typeof budgetForProjection>>,
): z.input<typeof BudgetRun> {
  const progress = progressOf(job);
  const origin = (job.data as { origin?: unknown } | null)?.origin;
  const model = modelOf(job, state, budget);
  return {
    queue: job.queueName,
    id: job.id ?? null,
    name: runName(job.data),
    origin: typeof origin === "string" ? origin : null,
    dryRun: isDryRun(job.data),
    state,
    stateInWords: plainState(state),
    startedAt: job.processedOn ? new Date(job.processedOn).toISOString() : null,
    budgetWaitMs: progress?.budgetWaitMs ?? 0,
    waitingUntil: progress?.waitingUntil ?? null,
    message: progress?.message ?? null,
    progress,
    model,
    projectedFinish: model.projectedFinish,
    projectionBasis: model.projectionBasis,
  };
}

/**
 * The shared rate budget as people think of it: what is left in this
 * window and when it resets (GET /api/governor's `budget`), the runs going
 * on and the runs waiting (a run paused for the budget says until when),
 * each with when it should finish.
 */
export async function budgetView(
  config: RuntimeConfig,
  queues: Queues,
  redis: Redis,
): Promise<z.input<typeof BudgetAnswer>> {
  const governor = await governorState(config, queues, redis, LISTED);
  const budget = await budgetForProjection(config, redis);
  const running: z.input<typeof BudgetRun>[] = [];
  const waiting: z.input<typeof BudgetRun>[] = [];
  for (const queue of [queues.imports, queues.exports]) {
    const [active, pending] = await Promise.all([
      queue.getJobs(["active"], 0, LISTED - 1, true),
      queue.getJobs(["waiting", "prioritized", "delayed"], 0, LISTED - 1, true),
    ]);
    for (const job of active) if (job) running.push(runOf(job, "active", budget));
    for (const job of pending) if (job) waiting.push(runOf(job, await job.getState(), budget));
  }
  return {
    service: governor.service,
    budget: governor.budget,
    ...(governor.note ? { note: governor.note } : {}),
    running,
    waiting,
  };
}

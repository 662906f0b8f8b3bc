import type { Job } from "bullmq";
import type { Redis } from "ioredis";
import type { RuntimeConfig } from "../../config/index.ts";
import { plainState, type Queues } from "../../queue/index.ts";
import { governorState } from "../queue-views.ts";
import { budgetForProjection, progressOf, projectionOf } from "./run-status.ts";

/** Runs listed per queue: the page shows a handful, a fleet rarely runs more at once. */
const LISTED = 50;

/** What a person calls a run: its job definition's name, else its kind. */
function nameOf(data: unknown): string {
  const d = (data ?? {}) as { job?: unknown; definition?: { name?: unknown }; kind?: unknown };
  if (typeof d.job === "string") return d.job;
  if (typeof d.definition?.name === "string") return d.definition.name;
  return typeof d.kind === "string" ? d.kind : "job";
}

function runOf(job: Job, state: string, budget: Awaited<ReturnType<typeof budgetForProjection>>) {
  const progress = progressOf(job);
  const data = (job.data ?? {}) as { origin?: unknown; dryRun?: unknown };
  return {
    queue: job.queueName,
    id: job.id ?? null,
    name: nameOf(job.data),
    origin: typeof data.origin === "string" ? data.origin : null,
    dryRun: data.dryRun === true,
    state,
    stateInWords: plainState(state),
    startedAt: job.processedOn ? new Date(job.processedOn).toISOString() : null,
    budgetWaitMs: progress?.budgetWaitMs ?? 0,
    waitingUntil: progress?.waitingUntil ?? null,
    message: progress?.message ?? null,
    progress,
    ...projectionOf(job, budget),
  };
}
export type BudgetRun = ReturnType<typeof runOf>;

/**
 * The shared rate budget as people think of it: what is left in this
 * window and when it resets (GET /api/governor's `budget`), the runs going
 * on and the runs waiting (a run paused for the budget says until when),
 * each with when it should finish.
 */
export async function budgetView(config: RuntimeConfig, queues: Queues, redis: Redis) {
  const governor = await governorState(config, queues, redis, LISTED);
  const budget = await budgetForProjection(config, redis);
  const running: BudgetRun[] = [];
  const waiting: BudgetRun[] = [];
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

import type { Job, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { z } from "zod";
import type { RuntimeConfig } from "../config/index.ts";
import { JobProgress, jobReport, type Queues } from "../queue/index.ts";
import { readBudget } from "../runtime/index.ts";
import type { BudgetStateInput, RunViewInput } from "./console/api-contract.ts";

const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : null);

/** Which runs GET /api/runs lists. */
export const RunsQuery = z
  .object({
    queue: z.enum(["imports", "exports"]).optional(),
    state: z.enum(["completed", "failed"]).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(20),
  })
  .strict();
export type RunsQuery = z.infer<typeof RunsQuery>;

function progressOf(job: Job): JobProgress | undefined {
  const parsed = JobProgress.safeParse(job.progress);
  return parsed.success ? parsed.data : undefined;
}

/** Paths a report points to: the rejects of an import, the values its `drop` policy left out. */
function filesOf(report: unknown): { rejectsFile: string | null; warningsFile: string | null } {
  const r = (typeof report === "object" && report !== null ? report : {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  return { rejectsFile: text(r.rejectsFile), warningsFile: text(r.warningsFile) };
}

/**
 * A failure's words as a reader of the ops API can use them: the paths of the
 * run's own files on the server become what the API serves them as, since
 * the person at the console cannot open a path on the server.
 */
function servedMessage(
  message: string | null,
  jobId: string | undefined,
  files: { rejectsFile: string | null },
): string | null {
  if (!message || !files.rejectsFile) return message;
  const download = `the rejects file (download: api/runs/imports/${jobId}/rejects.csv)`;
  return message.replaceAll(files.rejectsFile, download);
}

/**
 * One run as the ops API shows it: once finished, its report, or its failure
 * and the report it got to; before, neither (an earlier try's is not this run's).
 */
export function runView(job: Job, state: string): RunViewInput {
  const progress = progressOf(job);
  const failure = progress?.failure;
  const finished = state === "completed" || state === "failed";
  const report = finished ? (jobReport({ state, returnvalue: job.returnvalue, progress }) ?? null) : null;
  const files = filesOf(report);
  return {
    queue: job.queueName,
    id: job.id,
    state,
    data: job.data,
    attemptsMade: job.attemptsMade,
    addedAt: iso(job.timestamp),
    startedAt: iso(job.processedOn),
    finishedAt: iso(job.finishedOn),
    durationMs: job.processedOn && job.finishedOn ? job.finishedOn - job.processedOn : null,
    budgetWaitMs: progress?.budgetWaitMs ?? 0,
    report,
    ...files,
    failure:
      state === "failed"
        ? {
            code: failure?.code ?? null,
            message: servedMessage(failure?.message ?? job.failedReason ?? null, job.id, files),
            retryable: failure?.retryable ?? null,
            final: failure?.final ?? null,
            failedReason: servedMessage(job.failedReason ?? null, job.id, files),
          }
        : null,
  };
}
/** The latest finished runs of the queues, newest first. */
export async function recentRuns(queues: Queues, query: RunsQuery): Promise<RunViewInput[]> {
  const selected: Queue[] = query.queue ? [queues[query.queue]] : [queues.imports, queues.exports];
  const states = query.state ? [query.state] : (["completed", "failed"] as const);
  const runs: RunViewInput[] = [];
  for (const queue of selected) {
    for (const state of states) {
      const jobs = await queue.getJobs([state], 0, query.limit - 1, false);
      for (const job of jobs) if (job) runs.push(runView(job, state));
    }
  }
  runs.sort((a, b) => (b.finishedAt ?? "").localeCompare(a.finishedAt ?? ""));
  return runs.slice(0, query.limit);
}

/** A job not yet run: what it is for and what it waits for. */
function pendingView(job: Job, state: string) {
  const progress = progressOf(job);
  return {
    id: job.id,
    state,
    data: job.data,
    priority: job.opts.priority ?? 0,
    addedAt: iso(job.timestamp),
    attemptsMade: job.attemptsMade,
    /** Why a delayed job waits (a budget pause says until when, a held lock says whose). */
    message: progress?.message ?? null,
    waitingUntil: progress?.waitingUntil ?? null,
  };
}

/**
 * The shared rate budget of the configured token at the configured service,
 * and the jobs that wait: queued, prioritized, delayed (a budget pause puts a
 * job in delayed until the reset), and each queue's own pause after a 429.
 */
export async function governorState(config: RuntimeConfig, queues: Queues, redis: Redis, limit = 50) {
  let budget: BudgetStateInput | null = null;
  let note: string | undefined;
  const state = await readBudget(config, redis);
  if (state) {
    const now = Date.now();
    const resetAt = state.resetAt;
    const spent = state.remaining !== undefined && state.remaining <= 0;
    budget = {
      ...state,
      limit: state.limit ?? null,
      remaining: state.remaining ?? null,
      resetAt: resetAt !== undefined ? new Date(resetAt).toISOString() : null,
      resetInMs: resetAt !== undefined ? Math.max(0, resetAt - now) : null,
      /** Spent until the reset: every request waits for it. */
      pausedUntil: spent && resetAt !== undefined && resetAt > now ? new Date(resetAt).toISOString() : null,
    };
    if (state.limit === undefined)
      note = "no response seen yet: the budget is learned from the service's headers";
  } else {
    note = "no API token configured (RECRUIT_SYNC_API_TOKEN): the budget is kept per token";
  }

  const queuesView: Record<string, unknown> = {};
  for (const queue of [queues.imports, queues.exports]) {
    const [counts, ttl, jobs] = await Promise.all([
      queue.getJobCounts("waiting", "prioritized", "delayed", "active"),
      queue.getRateLimitTtl(),
      queue.getJobs(["waiting", "prioritized", "delayed"], 0, limit - 1, true),
    ]);
    const pending = await Promise.all(
      jobs.filter((j): j is Job => Boolean(j)).map(async (j) => pendingView(j, await j.getState())),
    );
    queuesView[queue.name] = {
      counts,
      /** After a 429 the service kept sending, the whole queue waits until then. */
      rateLimitedUntil: ttl > 0 ? new Date(Date.now() + ttl).toISOString() : null,
      waiting: pending,
    };
  }
  return { service: config.service.baseUrl, budget, ...(note ? { note } : {}), queues: queuesView };
}

import { DEFAULT_BATCH_SIZE } from "../../config/import-job.ts";
import type { JobProgress } from "../../queue/index.ts";

/** When a run should finish, and on what the guess rests, in words for the page. */
export interface Projection {
  /** ISO time, or null when nothing can be said yet. */
  projectedFinish: string | null;
  projectionBasis: string;
}

export interface ProjectionInput {
  progress: JobProgress | null;
  /** When a worker took the job (epoch ms). */
  startedAt: number | undefined;
  now: number;
  /** The definition's batch size: people per request. */
  batchSize: number | undefined;
  /** The shared budget as the governor knows it. */
  budget: { remaining: number | null; resetAt: number | null } | null;
}

const at = (ms: number) => new Date(Math.round(ms)).toISOString();

/**
 * A projection of when a running import finishes, from its pace so far and
 * the shared rate budget: the people left to send at the rate people were
 * sent (time waiting on the budget left out, reading included, so early on
 * it errs late), no earlier than the end of a pause for the budget, and past
 * the reset when the requests left exceed what this window has left. An
 * export does not know its size before it ends, and an import being read
 * does not yet know how many people it will send: both are null.
 */
export function projectFinish(input: ProjectionInput): Projection {
  const { progress, startedAt, now } = input;
  const none = (projectionBasis: string): Projection => ({ projectedFinish: null, projectionBasis });
  if (!progress || progress.kind === "pending" || startedAt === undefined) return none("not started");
  if (progress.kind === "export") return none("an export does not know its size before it ends");
  if (progress.phase === "hash" || progress.phase === "read") {
    return none("projected once the file is read");
  }
  if (progress.phase === "rejects" || progress.phase === "done") {
    return { projectedFinish: at(now), projectionBasis: "every batch is answered" };
  }
  const left = Math.max(0, progress.rowsRead - progress.rejected - progress.duplicates - progress.imported);
  if (left === 0) return { projectedFinish: at(now), projectionBasis: "the last batches are being answered" };
  const working = now - startedAt - progress.budgetWaitMs;
  if (progress.imported === 0 || working <= 0) return none("projected once the first batch is answered");
  const msPerPerson = working / progress.imported;
  const waitingUntil = progress.waitingUntil ? Date.parse(progress.waitingUntil) : Number.NaN;
  if (waitingUntil > now) {
    return {
      projectedFinish: at(waitingUntil + left * msPerPerson),
      projectionBasis: `paused for the rate budget, then ${left} people at the pace so far`,
    };
  }
  const perRequest = input.batchSize ?? DEFAULT_BATCH_SIZE;
  const requestsLeft = Math.ceil(left / perRequest);
  const remaining = input.budget?.remaining ?? null;
  const resetAt = input.budget?.resetAt ?? null;
  const paced = now + left * msPerPerson;
  if (remaining !== null && resetAt !== null && resetAt > now && requestsLeft > remaining) {
    const afterReset = Math.max(0, left - remaining * perRequest);
    return {
      projectedFinish: at(Math.max(paced, resetAt + afterReset * msPerPerson)),
      projectionBasis: `${requestsLeft} requests left, ${remaining} left in this window of the rate budget: not before its reset`,
    };
  }
  return { projectedFinish: at(paced), projectionBasis: `${left} people left at the pace so far` };
}

/** The batch size a job's data names, when it carries its definition. */
export function batchSizeOf(data: unknown): number | undefined {
  const definition = (data as { definition?: { batchSize?: unknown } } | null)?.definition;
  return typeof definition?.batchSize === "number" ? definition.batchSize : undefined;
}

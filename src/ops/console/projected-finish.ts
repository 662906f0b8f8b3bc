import { DEFAULT_BATCH_SIZE } from "../../config/import-job.ts";
import type { JobProgress } from "../../queue/index.ts";
import { type Projection, projectFinish as projectFromModel } from "../../queue/progress-model.ts";

export type { Projection };

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

/**
 * When a running import should finish, for the page: the one projection of
 * the progress model (src/queue/progress-model.ts) that `--wait` and
 * `--inline` show too, fed from the job and the shared budget.
 */
export function projectFinish(input: ProjectionInput): Projection {
  return projectFromModel({
    progress: input.progress ?? undefined,
    startedAt: input.startedAt,
    now: input.now,
    budgetWaitMs: input.progress?.budgetWaitMs ?? 0,
    waitingUntil: input.progress?.waitingUntil ?? null,
    budget: input.budget
      ? { ...input.budget, peoplePerRequest: input.batchSize ?? DEFAULT_BATCH_SIZE }
      : null,
  });
}

/** The batch size a job's data names, when it carries its definition. */
export function batchSizeOf(data: unknown): number | undefined {
  const definition = (data as { definition?: { batchSize?: unknown } } | null)?.definition;
  return typeof definition?.batchSize === "number" ? definition.batchSize : undefined;
}

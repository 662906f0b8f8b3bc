import { DEFAULT_BATCH_SIZE } from "../../config/import-job.ts";
import type { JobProgress } from "../../queue/index.ts";
import { type ProgressModel, progressModel } from "../../queue/progress-model.ts";

export interface RunModelInput {
  /** The job's queue state as BullMQ names it. */
  state: string;
  progress: JobProgress | null;
  dryRun: boolean;
  /** When a worker took the job (epoch ms). */
  startedAt: number | undefined;
  now: number;
  /** The definition's batch size: people per request. */
  batchSize: number | undefined;
  /** The shared budget as the governor knows it. */
  budget: { remaining: number | null; resetAt: number | null } | null;
}

/**
 * What the page shows of a queued run, and when it should finish: the one
 * progress model (src/queue/progress-model.ts) that `--wait` and `--inline`
 * show too, fed from the job and the shared budget.
 */
export function runModel(input: RunModelInput): ProgressModel {
  return progressModel({
    state: input.state,
    progress: input.progress ?? undefined,
    now: input.now,
    dryRun: input.dryRun,
    startedAt: input.startedAt,
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

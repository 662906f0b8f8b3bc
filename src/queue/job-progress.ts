import type { Job } from "bullmq";
import { z } from "zod";
import { ExportProgress } from "../exports/index.ts";
import { ImportProgress } from "../imports/index.ts";

/** What every job's progress carries besides the pipeline's own counts. */
export const JobStatusFields = z.object({
  /** One line for people: what the job is doing or waiting for. */
  message: z.string().optional(),
  /** Time this job spent waiting on the shared rate budget. */
  budgetWaitMs: z.number().min(0).default(0),
  /** Set when the job is paused for the budget. */
  waitingUntil: z.string().optional(),
  /**
   * Set while the job waits for a warehouse file another program has open:
   * since when (ISO), kept across its tries so the wait has an end.
   */
  lockWaitSince: z.string().optional(),
  failure: z
    .object({
      code: z.string(),
      message: z.string(),
      retryable: z.boolean(),
      final: z.boolean(),
      // Optional: a failure before any count has no report, and JSON drops an undefined one.
      report: z.unknown().optional(),
    })
    .optional(),
});

export const JobProgress = z.union([
  ImportProgress.extend(JobStatusFields.shape),
  ExportProgress.extend(JobStatusFields.shape),
  z.object({ kind: z.literal("pending") }).extend(JobStatusFields.shape),
]);
export type JobProgress = z.infer<typeof JobProgress>;

/**
 * Progress written to the job at most every `everyMs`, so a run of a million
 * rows does not write to Redis a thousand times a second; `flush` writes the
 * last state at once.
 */
export function progressWriter(job: Job, everyMs = 500) {
  let last = 0;
  let pending: JobProgress | undefined;
  let writing: Promise<void> = Promise.resolve();
  let current: JobProgress = { kind: "pending", budgetWaitMs: 0 };
  const write = (p: JobProgress) => {
    last = Date.now();
    pending = undefined;
    writing = writing.then(() => job.updateProgress(p).catch(() => {}));
  };
  return {
    get current(): JobProgress {
      return current;
    },
    update(p: JobProgress): void {
      current = p;
      if (Date.now() - last >= everyMs) write(p);
      else pending = p;
    },
    async flush(p?: JobProgress): Promise<void> {
      if (p) current = p;
      write(p ?? pending ?? current);
      await writing;
    },
  };
}

import { z } from "zod";
import { EXPORT_RESOURCES } from "../config/job-names.ts";
import type { ImportProgress } from "../imports/report.ts";

// The model's schema, apart from its computation (progress-model.ts), whose types
// reach into the pipelines: the console's page parses the model in a browser.

const count = z.number().int().min(0);
// The pipeline's phases, named here so the model loads without the import pipeline (an export's CLI needs none of it).
const IMPORT_PHASES = [
  "hash",
  "read",
  "send",
  "rejects",
  "done",
] as const satisfies readonly ImportProgress["phase"][];

/**
 * What people are shown of a run, wherever they look: the CLI's bars and
 * plain lines, and the console's run page. Plain data, computed by
 * `progressModel` from a run's progress.
 */
export const ProgressModel = z.object({
  kind: z.enum(["import", "export", "pending"]),
  /** The queue state in plain words ("running", "waiting for a worker"), or the command of an inline run. */
  state: z.string(),
  /** An import's phase as the pipeline names it; null for an export or a job not yet running. */
  phase: z.enum(IMPORT_PHASES).nullable(),
  /** What the run is doing, in plain words: "sending batches", "exporting incentives". */
  doing: z.string(),
  /** 0–100 where a share is known: of the file's bytes while hashing and reading, of the rows to send while sending. */
  percent: z.number().int().min(0).max(100).nullable(),
  /** A dry run sends nothing: its counts say "would import". */
  dryRun: z.boolean(),
  /** An import's file, read so far of its size. */
  bytes: z.object({ read: count, total: count }).nullable(),
  /** An import's rows: `toSend` is read less rejected and merged, known once reading is over. */
  rows: z
    .object({
      read: count,
      imported: count,
      rejected: count,
      merged: count,
      toSend: count.nullable(),
    })
    .nullable(),
  batches: z.object({ sent: count, resumed: count }).nullable(),
  requests: count,
  /** An export's resources in the order they ran; `done` once finished, whatever the outcome. */
  resources: z.array(
    z.object({
      name: z.enum(EXPORT_RESOURCES),
      status: z.enum(["running", "succeeded", "failed", "interrupted"]),
      done: z.boolean(),
      pages: count,
      rows: count,
    }),
  ),
  /** An export's pages and rows so far, over every resource. */
  totals: z.object({ pages: count, rows: count }).nullable(),
  /** Time the run has waited on the shared rate budget so far. */
  budgetWaitMs: z.number().min(0),
  /** Set while the rate budget holds the run: when it goes on (ISO). */
  waitingUntil: z.string().nullable(),
  /** When the run should end at its pace so far (ISO), see projectFinish; null when nothing can be said yet. */
  projectedFinish: z.string().nullable(),
  /** On what the projection rests, in words: "600 people left at the pace so far". */
  projectionBasis: z.string(),
  /** The worker's or the follower's own line, when it says more than the counts and the wait. */
  message: z.string().nullable(),
});
export type ProgressModel = z.infer<typeof ProgressModel>;

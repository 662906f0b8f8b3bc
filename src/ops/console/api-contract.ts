import { z } from "zod";
import { ImportPerson } from "../../api/schemas/person.ts";
import { Problem } from "../../errors/problems.ts";
import { RunReport } from "../../exports/run-report.ts";
import { ImportReport, OptOutReport } from "../../imports/report.ts";
import { ProgressModel } from "../../queue/progress-model-schema.ts";
import { MappingSuggestion } from "../../suggest/suggestion.ts";

/**
 * The console's API as both sides see it (docs/console.md): the header its
 * changing requests carry, and a schema for each answer. The server builds
 * its answers to these types and the page (page/, bundled for the browser)
 * parses every answer with them. Each module above is imported by its own
 * file rather than its folder's index: the indexes load the Node side
 * (threads, Redis, files), and this module goes into the browser too.
 */

/** The header the console's page sends with every request that changes something. */
export const CONSOLE_HEADER = { name: "x-requested-with", value: "recruit-sync-console" } as const;

const count = z.number().int().min(0);
/** A time, as ISO 8601. */
const instant = z.string();

/** A refusal: its code (docs/errors.md), one line, and what is wrong at each path of the request. */
export const Refusal = z.object({
  error: z.string(),
  message: z.string(),
  problems: z.array(Problem).optional(),
});
export type Refusal = z.infer<typeof Refusal>;

/** `POST /api/uploads`: the file as an import reads it, and the suggested mapping. */
export const UploadAnswer = z.object({
  uploadId: z.string(),
  fileName: z.string().nullable(),
  bytes: count,
  encoding: z.string(),
  delimiter: z.string(),
  /** A rejects file of an earlier run: `headers` and `rows` are as the import reads it, without its columns. */
  rejectsFile: z.boolean(),
  headers: z.array(z.string()),
  /** The first rows, to recognise the file by. */
  rows: z.array(z.array(z.string())),
  /** null when the suggestion failed on this file: `suggestionError` says why. */
  suggestion: MappingSuggestion.nullable(),
  suggestionError: z.string().optional(),
});
export type UploadAnswer = z.infer<typeof UploadAnswer>;

/** A preview's report: the dry run's, without the paths of its files (they are gone). */
const PreviewReport = z.discriminatedUnion("kind", [
  ImportReport.omit({ rejectsFile: true, requestsFile: true, warningsFile: true }),
  OptOutReport.omit({ rejectsFile: true, requestsFile: true }),
]);

/** One person as a request would carry them, and where to. */
export const PreviewPerson = z.object({
  /** The request's path: the study. */
  path: z.string(),
  population: z.string().nullable(),
  person: ImportPerson,
});
export type PreviewPerson = z.infer<typeof PreviewPerson>;

export const PreviewRejectedRow = z.object({
  /** Row of the file, the header being row 1. */
  row: z.number().int(),
  reason: z.string(),
  cells: z.array(z.string()),
});
export type PreviewRejectedRow = z.infer<typeof PreviewRejectedRow>;

/** `POST /api/uploads/:uploadId/preview`. */
export const PreviewAnswer = z.object({
  report: PreviewReport,
  sent: z.array(PreviewPerson),
  /** The file's headers as the rejects file repeats them, for the cells of `rejected`. */
  rejectedHeaders: z.array(z.string()),
  rejected: z.array(PreviewRejectedRow),
});
export type PreviewAnswer = z.infer<typeof PreviewAnswer>;

/** `POST /api/uploads/:uploadId/run`. */
export const RunQueued = z.object({
  jobId: z.string(),
  queue: z.literal("imports"),
  /** The same file and definition were already queued or done: that run is the one to follow. */
  duplicate: z.boolean(),
  state: z.string(),
});

/** `POST /api/jobs`. */
export const SavedJob = z.object({ name: z.string(), file: z.string(), overwritten: z.boolean() });
export type SavedJob = z.infer<typeof SavedJob>;

/** What a finished run reported, whatever its kind; reports of older versions may not parse. */
export const JobReport = z.union([ImportReport, OptOutReport, RunReport]);
export type JobReport = z.infer<typeof JobReport>;

const RunFailure = z.object({
  code: z.string().nullable(),
  message: z.string().nullable(),
  retryable: z.boolean().nullable(),
  final: z.boolean().nullable(),
  failedReason: z.string().nullable(),
});

/** A run as `GET /api/runs` lists it (docs/ops.md): its job's data, and once finished its report or failure. */
export const RunView = z.object({
  queue: z.string(),
  id: z.string().optional(),
  state: z.string(),
  /** The job's data as it was enqueued. */
  data: z.unknown(),
  attemptsMade: count,
  addedAt: instant.nullable(),
  startedAt: instant.nullable(),
  finishedAt: instant.nullable(),
  durationMs: z.number().nullable(),
  budgetWaitMs: z.number().min(0),
  /** As the job kept it: `JobReport` reads it. */
  report: z.unknown(),
  rejectsFile: z.string().nullable(),
  warningsFile: z.string().nullable(),
  failure: RunFailure.nullable(),
});
export type RunView = z.infer<typeof RunView>;
export type RunViewInput = z.input<typeof RunView>;

/** `GET /api/runs`. */
export const RecentRuns = z.object({ runs: z.array(RunView) });

/** When a run not finished should end, and on what that rests (`ProgressModel` has the same). */
const Projection = {
  projectedFinish: instant.nullable(),
  projectionBasis: z.string(),
};

/** `GET /api/runs/:queue/:jobId`: where a run is, in words and in the progress model every view shows. */
export const RunStatus = RunView.extend({
  finished: z.boolean(),
  stateInWords: z.string(),
  /** The progress the worker wrote, as it wrote it. */
  progress: z.unknown(),
  model: ProgressModel,
  message: z.string().nullable(),
  waitingUntil: instant.nullable(),
  ...Projection,
});
export type RunStatus = z.infer<typeof RunStatus>;

/** The shared rate budget, as `GET /api/governor` shows it (docs/ops.md). */
const BudgetState = z.looseObject({
  limit: z.number().nullable(),
  remaining: z.number().nullable(),
  resetAt: instant.nullable(),
  resetInMs: z.number().nullable(),
  /** Spent until the reset: every request waits for it. */
  pausedUntil: instant.nullable(),
});
export type BudgetStateInput = z.input<typeof BudgetState>;

/** A run going on or waiting. */
export const BudgetRun = z.object({
  queue: z.string(),
  id: z.string().nullable(),
  /** Its job definition's name, else its kind. */
  name: z.string(),
  origin: z.string().nullable(),
  dryRun: z.boolean(),
  state: z.string(),
  stateInWords: z.string(),
  startedAt: instant.nullable(),
  budgetWaitMs: z.number().min(0),
  waitingUntil: instant.nullable(),
  message: z.string().nullable(),
  progress: z.unknown(),
  model: ProgressModel,
  ...Projection,
});
export type BudgetRun = z.infer<typeof BudgetRun>;

/** `GET /api/budget`. */
export const BudgetAnswer = z.object({
  service: z.string(),
  budget: BudgetState.nullable(),
  /** Why there is no budget to show. */
  note: z.string().optional(),
  running: z.array(BudgetRun),
  waiting: z.array(BudgetRun),
});
export type BudgetAnswer = z.infer<typeof BudgetAnswer>;

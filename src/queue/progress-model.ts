import { z } from "zod";
import { EXPORT_RESOURCES } from "../config/job-names.ts";
import type { ExportProgress } from "../exports/index.ts";
import type { ImportProgress } from "../imports/index.ts";
import type { JobProgress, JobStatusFields } from "./job-progress.ts";
import { plainState } from "./plain-state.ts";

/** A pipeline's own progress (inline runs) or a queued job's, which adds the status fields. */
export type AnyProgress = JobProgress | ImportProgress | ExportProgress;

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
  /** When the run should end at the rate it has sent rows in this phase so far (ISO); null when unknown. */
  projectedFinish: z.string().nullable(),
  /** The worker's or the follower's own line, when it says more than the counts and the wait. */
  message: z.string().nullable(),
});
export type ProgressModel = z.infer<typeof ProgressModel>;

/** What `progressModel` needs besides the progress: time, and what an inline run hears outside it. */
export interface ProgressInput {
  /** The job's queue state as BullMQ names it, or the command of an inline run ("import"). */
  state: string;
  progress: AnyProgress | undefined;
  now: number;
  dryRun?: boolean;
  /** An inline run's wait on the budget, heard from the governor; a job's own figure wins. */
  budgetWaitMs?: number;
  waitingUntil?: string;
  /** From `projectFinish`; a job's own projection (written by its worker) wins. */
  projectedFinish?: string;
}

const PHASE_WORDS: Record<ImportProgress["phase"], string> = {
  hash: "checking whether this file was imported before",
  read: "reading and checking rows",
  send: "sending batches",
  rejects: "writing the rows the service refused",
  done: "done",
};

/** What an import is doing, in plain words. */
export function phaseInWords(phase: ImportProgress["phase"], dryRun = false): string {
  if (dryRun && phase === "send") return "checking batches (a dry run sends nothing)";
  return PHASE_WORDS[phase];
}

/** Rows an import will send: read, less rejected and merged duplicates; unknown before reading ends. */
function rowsToSend(p: ImportProgress): number | undefined {
  if (p.phase !== "send" && p.phase !== "rejects" && p.phase !== "done") return undefined;
  return Math.max(0, p.rowsRead - p.rejected - p.duplicates);
}

/**
 * Percent done: of the file's bytes while hashing and reading, of the rows
 * left to send (read less rejected and merged) while sending.
 */
export function importPercent(p: ImportProgress): number | undefined {
  if (p.phase === "done") return 100;
  if (p.phase === "send" || p.phase === "rejects") {
    const toSend = rowsToSend(p) ?? 0;
    return toSend > 0 ? Math.min(100, Math.floor((p.imported / toSend) * 100)) : undefined;
  }
  if (!p.bytesTotal) return undefined;
  return Math.min(100, Math.floor((p.bytesRead / p.bytesTotal) * 100));
}

/** When the current phase began and what was done by then: the base of a projected finish. */
export const PhaseClock = z.object({ phase: z.string(), since: z.number(), doneAtStart: count });
export type PhaseClock = z.infer<typeof PhaseClock>;

/** The clock after `progress`: the same while the phase (an export's resource) stays, a new one when it moves. */
export function advanceClock(
  clock: PhaseClock | undefined,
  progress: AnyProgress | undefined,
  now: number,
): PhaseClock | undefined {
  if (!progress || progress.kind === "pending") return clock;
  const phase = progress.kind === "import" ? progress.phase : (progress.resource ?? "");
  if (clock?.phase === phase) return clock;
  return { phase, since: now, doneAtStart: progress.kind === "import" ? progress.imported : 0 };
}

/**
 * When an import should end, at the rate it has sent rows since sending
 * began: rows still to send over rows sent per millisecond. Only while
 * sending — hashing and reading say nothing of how fast the service takes
 * rows, and an export does not know how many pages are left.
 */
export function projectFinish(
  clock: PhaseClock | undefined,
  progress: AnyProgress | undefined,
  now: number,
): string | undefined {
  if (!clock || progress?.kind !== "import" || progress.phase !== "send" || clock.phase !== "send") {
    return undefined;
  }
  const sent = progress.imported - clock.doneAtStart;
  const elapsed = now - clock.since;
  const left = (rowsToSend(progress) ?? 0) - progress.imported;
  if (sent <= 0 || elapsed <= 0 || left < 0) return undefined;
  return new Date(now + Math.ceil((left * elapsed) / sent)).toISOString();
}

/** What people are shown of a run: see ProgressModel. Pure: the same input, the same model. */
export function progressModel(input: ProgressInput): ProgressModel {
  const { progress: p, now } = input;
  const dryRun = input.dryRun === true;
  // A queued job's progress carries its own wait and projection; an inline run's does not.
  const own = (p ?? {}) as Partial<z.infer<typeof JobStatusFields>>;
  const until = own.waitingUntil ?? input.waitingUntil;
  const base: ProgressModel = {
    kind: p?.kind ?? "pending",
    state: plainState(input.state),
    phase: null,
    doing: "",
    percent: null,
    dryRun,
    bytes: null,
    rows: null,
    batches: null,
    requests: 0,
    resources: [],
    totals: null,
    budgetWaitMs: own.budgetWaitMs || input.budgetWaitMs || 0,
    // A resume time gone by is no longer a wait.
    waitingUntil: until && Date.parse(until) > now ? until : null,
    projectedFinish: own.projectedFinish ?? input.projectedFinish ?? null,
    // "done" adds nothing to the counts, and a pause's message repeats the resume time waitingUntil gives.
    message: own.message && own.message !== "done" && !own.waitingUntil ? own.message : null,
  };
  if (!p || p.kind === "pending") return { ...base, doing: base.message ?? base.state };
  if (p.kind === "import") {
    return {
      ...base,
      phase: p.phase,
      doing: phaseInWords(p.phase, dryRun),
      percent: importPercent(p) ?? null,
      bytes: { read: p.bytesRead, total: p.bytesTotal },
      rows: {
        read: p.rowsRead,
        imported: p.imported,
        rejected: p.rejected,
        merged: p.duplicates,
        toSend: rowsToSend(p) ?? null,
      },
      batches: { sent: p.batches, resumed: p.batchesResumed },
      requests: p.requests,
      projectedFinish: p.phase === "send" ? base.projectedFinish : null,
    };
  }
  const resources = Object.entries(p.resources).map(([name, s]) => ({
    name: name as ProgressModel["resources"][number]["name"],
    status: s.status,
    done: s.status !== "running",
    pages: s.pages,
    rows: s.rows,
  }));
  const running = resources.find((r) => !r.done);
  return {
    ...base,
    doing: running ? `exporting ${running.name}` : resources.length ? "finished" : "starting",
    resources,
    totals: resources.reduce((a, r) => ({ pages: a.pages + r.pages, rows: a.rows + r.rows }), {
      pages: 0,
      rows: 0,
    }),
    projectedFinish: null,
  };
}

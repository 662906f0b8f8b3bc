import type { z } from "zod";
import type { ExportProgress } from "../exports/index.ts";
import type { ImportProgress } from "../imports/index.ts";
import type { JobProgress, JobStatusFields } from "./job-progress.ts";
import { plainState } from "./plain-state.ts";
import { ProgressModel } from "./progress-model-schema.ts";

/** A pipeline's own progress (inline runs) or a queued job's, which adds the status fields. */
export type AnyProgress = JobProgress | ImportProgress | ExportProgress;

export { ProgressModel };

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
  /** When the run started (a job: when a worker took it), epoch ms: the base of the projected finish. */
  startedAt?: number;
  /** The shared budget, when the caller knows it: a projection then waits for its reset. */
  budget?: BudgetWindow | null;
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

/** The shared rate budget as the governor knows it, and how many people one request sends. */
export interface BudgetWindow {
  remaining: number | null;
  /** When the budget's window resets (epoch ms). */
  resetAt: number | null;
  /** The definition's batch size. */
  peoplePerRequest: number;
}

/** When a run should finish, and on what the guess rests, in words. */
export interface Projection {
  projectedFinish: string | null;
  projectionBasis: string;
}

const at = (ms: number) => new Date(Math.round(ms)).toISOString();

/**
 * When a running import should finish, from its pace so far: the people
 * left to send at the rate people were sent since the run started (time
 * waiting on the rate budget left out, reading included, so early on it errs
 * late), no earlier than the end of a pause for the budget, and — when the
 * budget is known — past its reset when the requests left exceed what this
 * window has left. An export does not know its size before it ends, and an
 * import being read does not yet know how many people it will send: both
 * have no projection.
 */
export function projectFinish(input: {
  progress: AnyProgress | undefined;
  /** When the run started (a job: when a worker took it), epoch ms. */
  startedAt: number | undefined;
  now: number;
  budgetWaitMs: number;
  /** Set while the budget holds the run (ISO). */
  waitingUntil: string | null;
  budget?: BudgetWindow | null;
}): Projection {
  const { progress, startedAt, now } = input;
  const none = (projectionBasis: string): Projection => ({ projectedFinish: null, projectionBasis });
  if (!progress || progress.kind === "pending" || startedAt === undefined) return none("not started");
  if (progress.kind === "export") return none("an export does not know its size before it ends");
  if (progress.phase === "hash" || progress.phase === "read") return none("projected once the file is read");
  if (progress.phase === "rejects" || progress.phase === "done") {
    return { projectedFinish: at(now), projectionBasis: "every batch is answered" };
  }
  const left = Math.max(0, (rowsToSend(progress) ?? 0) - progress.imported);
  if (left === 0) return { projectedFinish: at(now), projectionBasis: "the last batches are being answered" };
  const working = now - startedAt - input.budgetWaitMs;
  if (progress.imported === 0 || working <= 0) return none("projected once the first batch is answered");
  const msPerPerson = working / progress.imported;
  const waitingUntil = input.waitingUntil ? Date.parse(input.waitingUntil) : Number.NaN;
  if (waitingUntil > now) {
    return {
      projectedFinish: at(waitingUntil + left * msPerPerson),
      projectionBasis: `paused for the rate budget, then ${left} people at the pace so far`,
    };
  }
  const paced = now + left * msPerPerson;
  const { remaining = null, resetAt = null, peoplePerRequest = 1 } = input.budget ?? {};
  const requestsLeft = Math.ceil(left / peoplePerRequest);
  if (remaining !== null && resetAt !== null && resetAt > now && requestsLeft > remaining) {
    const afterReset = Math.max(0, left - remaining * peoplePerRequest);
    return {
      projectedFinish: at(Math.max(paced, resetAt + afterReset * msPerPerson)),
      projectionBasis: `${requestsLeft} requests left, ${remaining} left in this window of the rate budget: not before its reset`,
    };
  }
  return { projectedFinish: at(paced), projectionBasis: `${left} people left at the pace so far` };
}

/** What people are shown of a run: see ProgressModel. Pure: the same input, the same model. */
export function progressModel(input: ProgressInput): ProgressModel {
  const { progress: p, now } = input;
  const dryRun = input.dryRun === true;
  // A queued job's progress carries its own wait; an inline run hears of it from the governor.
  const own = (p ?? {}) as Partial<z.infer<typeof JobStatusFields>>;
  const until = own.waitingUntil ?? input.waitingUntil;
  const budgetWaitMs = own.budgetWaitMs || input.budgetWaitMs || 0;
  // A resume time gone by is no longer a wait.
  const waitingUntil = until && Date.parse(until) > now ? until : null;
  const projection = projectFinish({
    progress: p,
    startedAt: input.startedAt,
    now,
    budgetWaitMs,
    waitingUntil,
    budget: input.budget ?? null,
  });
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
    budgetWaitMs,
    waitingUntil,
    ...projection,
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
  };
}

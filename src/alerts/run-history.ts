import type { Job, Queue } from "bullmq";
import { JobProgress, type Queues } from "../queue/index.ts";

export type RunQueue = "imports" | "exports";

/** One finished run as people read it: the console's run history and `recruit-sync runs` show these. */
export interface RunSummary {
  id: string;
  queue: RunQueue;
  /** The job definition's name (or what stands for it: a preset, an inline definition). */
  job: string;
  /** skipped: a scheduled tick that found another run refreshing the same tables, or a file already imported. */
  state: "completed" | "failed" | "skipped";
  origin: string | null;
  dryRun: boolean;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  /** Rows read (an import) or written (an export); null when the run got no report. */
  rows: number | null;
  /** Rows an import rejected; null for exports and runs without a report. */
  rejected: number | null;
  /** Wall-clock time the run waited on the shared rate budget. */
  budgetWaitMs: number;
  /** The failure's code (docs/errors.md), for a failed run. */
  code: string | null;
}

const record = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : null);

/** The name a run goes by: its job definition's, else what it was run with. */
export function runJobName(data: unknown): string {
  const d = record(data);
  if (typeof d.job === "string" && d.job) return d.job;
  const inline = record(d.definition).name;
  if (typeof inline === "string" && inline) return inline;
  if (typeof d.preset === "string") return `${d.preset} preset`;
  return d.kind === "export" ? "export" : "import";
}

/** A finished BullMQ job as a run summary. */
export function summarizeRun(job: Job, queue: RunQueue, finished: "completed" | "failed"): RunSummary {
  const parsed = JobProgress.safeParse(job.progress);
  const progress = parsed.success ? parsed.data : undefined;
  const failure = progress?.failure;
  const report = record(finished === "completed" ? job.returnvalue : failure?.report);
  const data = record(job.data);
  const skipped = finished === "completed" && report.status === "skipped";
  const rows = queue === "imports" ? num(report.rowsRead) : num(record(report.totals).rows);
  return {
    id: String(job.id),
    queue,
    job: runJobName(data),
    state: skipped ? "skipped" : finished,
    origin: typeof data.origin === "string" ? data.origin : null,
    dryRun: data.dryRun === true,
    startedAt: iso(job.processedOn),
    finishedAt: iso(job.finishedOn),
    durationMs: job.processedOn && job.finishedOn ? job.finishedOn - job.processedOn : null,
    rows,
    rejected: queue === "imports" ? num(report.rejected) : null,
    budgetWaitMs: Math.round(progress?.budgetWaitMs ?? num(report.budgetWaitMs) ?? 0),
    code: finished === "failed" ? (failure?.code ?? "internal") : null,
  };
}

export interface ReadRunsOptions {
  /** Only this job's runs. */
  job?: string;
  /** Finished jobs read per queue and state, newest first (what BullMQ keeps: queue.keepCompleted/keepFailed). */
  scan?: number;
}

/**
 * The finished runs Redis still holds (BullMQ's completed and failed jobs),
 * newest first. The one source of the run history until the warehouse keeps
 * a `sync_runs` table of every run.
 */
export async function readRuns(queues: Queues, options: ReadRunsOptions = {}): Promise<RunSummary[]> {
  const scan = options.scan ?? 200;
  const runs: RunSummary[] = [];
  const pairs: Array<[RunQueue, Queue]> = [
    ["imports", queues.imports],
    ["exports", queues.exports],
  ];
  for (const [name, queue] of pairs) {
    for (const state of ["completed", "failed"] as const) {
      const jobs = await queue.getJobs([state], 0, scan - 1, false);
      for (const job of jobs) {
        if (!job) continue;
        const run = summarizeRun(job, name, state);
        if (!options.job || run.job === options.job) runs.push(run);
      }
    }
  }
  return runs.sort((a, b) => (b.finishedAt ?? "").localeCompare(a.finishedAt ?? ""));
}

/** The runs of one job, newest first. */
export interface JobRuns {
  job: string;
  queue: RunQueue;
  runs: RunSummary[];
}

/** Runs grouped by job (and queue), each group newest first, the groups by their latest run. */
export function groupRuns(runs: readonly RunSummary[], perJob = Number.POSITIVE_INFINITY): JobRuns[] {
  const groups = new Map<string, JobRuns>();
  for (const run of runs) {
    const key = `${run.queue}|${run.job}`;
    let group = groups.get(key);
    if (!group) {
      group = { job: run.job, queue: run.queue, runs: [] };
      groups.set(key, group);
    }
    if (group.runs.length < perJob) group.runs.push(run);
  }
  return [...groups.values()];
}

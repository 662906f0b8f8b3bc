import type { Job, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { JobProgress, type Queues } from "../queue/index.ts";
import { alertKeys } from "./alert-keys.ts";
import { readAlertStates } from "./alert-state.ts";

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

/** A rule's state for one job, as the run history shows it beside the job's runs. */
export interface JobAlertState {
  rule: string;
  state: "firing" | "ok";
  since: string;
  severity: string | null;
  title: string | null;
}

/** One job's recent runs, its alert states and the series its sparklines draw (oldest first). */
export interface JobHistory extends JobRuns {
  alerts: JobAlertState[];
  series: { durationMs: number[]; rejected: number[] };
}

export interface RunHistory {
  jobs: JobHistory[];
  /** States of the rules about no one job (the budget, Redis, a queue's waiting runs). */
  fleetAlerts: Array<JobAlertState & { subject: string }>;
  /** Where the runs come from: what BullMQ keeps of finished jobs (queue.keepCompleted / keepFailed). */
  source: "redis";
}

/** Does an alert state's subject name this job (`queue/job` for failures, the job's name otherwise)? */
function aboutJob(subject: string, group: JobRuns): boolean {
  return subject === group.job || subject === `${group.queue}/${group.job}`;
}

/**
 * The run history the console's page and `recruit-sync runs` both show: the
 * latest `perJob` runs of each job (or of one), the alert states beside
 * them, and each job's duration and rejects in time order for a sparkline.
 */
export async function runHistory(
  queues: Queues,
  alertStates: ReadonlyArray<{
    rule: string;
    subject: string;
    state: "firing" | "ok";
    since: number;
    severity?: string | undefined;
    title?: string | undefined;
  }>,
  options: { job?: string; perJob?: number } = {},
): Promise<RunHistory> {
  const groups = groupRuns(
    await readRuns(queues, options.job ? { job: options.job } : {}),
    options.perJob ?? 20,
  );
  const view = (s: (typeof alertStates)[number]): JobAlertState => ({
    rule: s.rule,
    state: s.state,
    since: new Date(s.since).toISOString(),
    severity: s.severity ?? null,
    title: s.title ?? null,
  });
  const claimed = new Set<(typeof alertStates)[number]>();
  const jobs = groups.map((group) => {
    const mine = alertStates.filter((s) => aboutJob(s.subject, group));
    for (const s of mine) claimed.add(s);
    const oldestFirst = [...group.runs].reverse().filter((r) => r.state !== "skipped");
    return {
      ...group,
      alerts: mine.map(view),
      series: {
        durationMs: oldestFirst.map((r) => r.durationMs ?? 0),
        rejected: oldestFirst.map((r) => r.rejected ?? 0),
      },
    };
  });
  const fleetAlerts = options.job
    ? []
    : alertStates.filter((s) => !claimed.has(s)).map((s) => ({ ...view(s), subject: s.subject }));
  return { jobs, fleetAlerts, source: "redis" };
}

/**
 * The run history as both ways of showing it read it: the finished runs of
 * the queues and the alert states, both from Redis.
 *
 * @example
 * const history = await readRunHistory(queues, redis, config.redis.prefix, { job: "nightly-export" });
 * for (const job of history.jobs) console.log(job.job, job.runs.length);
 */
export async function readRunHistory(
  queues: Queues,
  redis: Redis,
  prefix: string,
  options: { job?: string; perJob?: number } = {},
): Promise<RunHistory> {
  return runHistory(queues, await readAlertStates(redis, alertKeys(prefix)), options);
}

import { CronExpressionParser } from "cron-parser";
import type { AlertRulesConfig } from "../config/index.ts";
import type { Observation } from "./alert-state.ts";
import type { JobRuns, RunSummary } from "./run-history.ts";

/** What the rules look at, gathered once per evaluation (evaluate.ts). Plain data: each rule is a pure function of it. */
export interface RuleInputs {
  now: number;
  /** Finished runs per job, newest first. */
  jobs: JobRuns[];
  /** The export schedules of jobs/, with when each was first seen (epoch ms). */
  schedules: Array<{ job: string; cron: string; timezone: string; firstSeenAt: number }>;
  /** The shared budget: spent (or a queue held after 429s) since when, and until when. */
  budget: { pausedSince: number | null; pausedUntil: number | null };
  /** Runs waiting for a worker, per queue: how many, and since when the oldest waits. */
  waiting: Array<{ queue: string; count: number; oldestSince: number | null }>;
  /** The latest loss of Redis's data noticed, if any. */
  dataLost: { at: number } | null;
  /** The latest reconciliation of each job (reportReconciliation). */
  reconciliations: Array<{ job: string; missing: number; checked: number; at: string }>;
  prefix: string;
}

const iso = (ms: number | null | undefined) => (ms ? new Date(ms).toISOString() : null);
const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/** The latest run that says something of the job's health: a skipped tick says nothing, nor does a dry run. */
function latestReal(runs: readonly RunSummary[]): RunSummary | undefined {
  return runs.find((r) => r.state !== "skipped" && !r.dryRun);
}

export function jobFailedRule(input: RuleInputs, rule: AlertRulesConfig["jobFailed"]): Observation[] {
  const out: Observation[] = [];
  for (const group of input.jobs) {
    const latest = latestReal(group.runs);
    if (!latest) continue;
    const firing = latest.state === "failed";
    out.push({
      rule: "jobFailed",
      subject: `${group.queue}/${group.job}`,
      firing,
      severity: rule.severity,
      title: firing
        ? `${group.job}: the latest run failed for good (${latest.code})`
        : `${group.job}: ran well again`,
      facts: {
        job: group.job,
        queue: group.queue,
        runId: latest.id,
        code: latest.code,
        finishedAt: latest.finishedAt,
      },
    });
  }
  return out;
}

export function rejectedRowsRule(input: RuleInputs, rule: AlertRulesConfig["rejectedRows"]): Observation[] {
  const out: Observation[] = [];
  for (const group of input.jobs) {
    if (group.queue !== "imports") continue;
    const latest = group.runs.find((r) => r.state === "completed" && !r.dryRun && r.rows !== null);
    if (!latest || latest.rows === null) continue;
    const rejected = latest.rejected ?? 0;
    const share = latest.rows > 0 ? rejected / latest.rows : 0;
    const firing = share > rule.share;
    out.push({
      rule: "rejectedRows",
      subject: group.job,
      firing,
      severity: rule.severity,
      title: firing
        ? `${group.job}: ${rejected} of ${latest.rows} rows rejected (${(share * 100).toFixed(1)}%, above ${(rule.share * 100).toFixed(1)}%)`
        : `${group.job}: rejected rows back under ${(rule.share * 100).toFixed(1)}% (${rejected} of ${latest.rows})`,
      facts: {
        job: group.job,
        runId: latest.id,
        rows: latest.rows,
        rejected,
        share: Math.round(share * 10_000) / 10_000,
        threshold: rule.share,
        finishedAt: latest.finishedAt,
      },
    });
  }
  return out;
}

/** The first tick of `cron` after `from` (epoch ms), in its time zone. */
export function nextTick(cron: string, timezone: string, from: number): number {
  return CronExpressionParser.parse(cron, { currentDate: new Date(from), tz: timezone })
    .next()
    .getTime();
}

export function staleScheduleRule(input: RuleInputs, rule: AlertRulesConfig["staleSchedule"]): Observation[] {
  const out: Observation[] = [];
  for (const schedule of input.schedules) {
    const group = input.jobs.find((g) => g.queue === "exports" && g.job === schedule.job);
    const success = group?.runs.find((r) => r.state === "completed" && r.finishedAt);
    const lastSuccess = success?.finishedAt ? Date.parse(success.finishedAt) : null;
    // Before its first success a schedule is judged from when it was first seen.
    const from = lastSuccess ?? schedule.firstSeenAt;
    const due = nextTick(schedule.cron, schedule.timezone, from);
    const overdueAt = due + rule.graceMs;
    const firing = input.now > overdueAt;
    out.push({
      rule: "staleSchedule",
      subject: schedule.job,
      firing,
      severity: rule.severity,
      title: firing
        ? `${schedule.job}: no successful run since ${iso(from)} (due ${iso(due)}, grace ${seconds(rule.graceMs)}); is a worker running?`
        : `${schedule.job}: the schedule ran well again`,
      facts: {
        job: schedule.job,
        cron: schedule.cron,
        timezone: schedule.timezone,
        lastSuccessAt: iso(lastSuccess),
        dueAt: iso(due),
        graceMs: rule.graceMs,
      },
    });
  }
  return out;
}

export function budgetPausedRule(input: RuleInputs, rule: AlertRulesConfig["budgetPaused"]): Observation[] {
  const since = input.budget.pausedSince;
  const firing = since !== null && input.now - since > rule.limitMs;
  return [
    {
      rule: "budgetPaused",
      subject: "rate budget",
      firing,
      severity: rule.severity,
      title: firing
        ? `the shared rate budget has been paused for ${seconds(input.now - (since ?? input.now))} (limit ${seconds(rule.limitMs)})`
        : "the shared rate budget is no longer paused",
      facts: {
        pausedSince: iso(since),
        pausedUntil: iso(input.budget.pausedUntil),
        limitMs: rule.limitMs,
      },
    },
  ];
}

export function redisDataLostRule(input: RuleInputs, rule: AlertRulesConfig["redisDataLost"]): Observation[] {
  const lost = input.dataLost;
  const firing = lost !== null && input.now - lost.at < rule.clearAfterMs;
  return [
    {
      rule: "redisDataLost",
      subject: input.prefix,
      firing,
      severity: rule.severity,
      title: firing
        ? `Redis lost its data under ${input.prefix}: queued jobs, schedules and ledgers are gone; run Redis with appendonly yes and maxmemory-policy noeviction`
        : `Redis has kept its data under ${input.prefix} for ${seconds(rule.clearAfterMs)}`,
      facts: { prefix: input.prefix, noticedAt: iso(lost?.at), clearAfterMs: rule.clearAfterMs },
    },
  ];
}

export function missingPeopleRule(input: RuleInputs, rule: AlertRulesConfig["missingPeople"]): Observation[] {
  return input.reconciliations.map((r) => {
    const firing = r.missing > rule.atMost;
    return {
      rule: "missingPeople" as const,
      subject: r.job,
      firing,
      severity: rule.severity,
      title: firing
        ? `${r.job}: reconciliation found ${r.missing} of ${r.checked} people missing from the service`
        : `${r.job}: reconciliation found every person (${r.checked} checked)`,
      facts: { job: r.job, missing: r.missing, checked: r.checked, reconciledAt: r.at, atMost: rule.atMost },
    };
  });
}

export function waitingForWorkerRule(
  input: RuleInputs,
  rule: AlertRulesConfig["waitingForWorker"],
): Observation[] {
  return input.waiting.map((w) => {
    const waited = w.oldestSince === null ? 0 : input.now - w.oldestSince;
    const firing = w.count > 0 && waited > rule.limitMs;
    return {
      rule: "waitingForWorker" as const,
      subject: w.queue,
      firing,
      severity: rule.severity,
      title: firing
        ? `${w.queue}: ${w.count} run(s) waiting for a worker, the oldest for ${seconds(waited)}; start 'recruit-sync worker'`
        : `${w.queue}: no run waits for a worker longer than ${seconds(rule.limitMs)}`,
      facts: {
        queue: w.queue,
        waiting: w.count,
        oldestSince: iso(w.oldestSince),
        limitMs: rule.limitMs,
      },
    };
  });
}

/** Every enabled rule's observations. */
export function observe(input: RuleInputs, rules: AlertRulesConfig): Observation[] {
  const out: Observation[] = [];
  if (rules.jobFailed.enabled) out.push(...jobFailedRule(input, rules.jobFailed));
  if (rules.rejectedRows.enabled) out.push(...rejectedRowsRule(input, rules.rejectedRows));
  if (rules.staleSchedule.enabled) out.push(...staleScheduleRule(input, rules.staleSchedule));
  if (rules.budgetPaused.enabled) out.push(...budgetPausedRule(input, rules.budgetPaused));
  if (rules.redisDataLost.enabled) out.push(...redisDataLostRule(input, rules.redisDataLost));
  if (rules.missingPeople.enabled) out.push(...missingPeopleRule(input, rules.missingPeople));
  if (rules.waitingForWorker.enabled) out.push(...waitingForWorkerRule(input, rules.waitingForWorker));
  return out;
}

import type { RuntimeConfig } from "../../config/index.ts";
import { RecruitSyncError } from "../../errors/index.ts";
import { RunReport } from "../../exports/index.ts";
import { followJob, type Queues, SCHEDULER_PREFIX } from "../../queue/index.ts";
import { progressLine } from "../progress/plain-line.ts";
import { DEMO_EXPORT_JOB } from "./demo-config.ts";

export interface ScheduledExport {
  schedulerId: string;
  /** The scheduler's cron and time zone, as the worker reconciled them from jobs/. */
  pattern: string | undefined;
  tz: string | undefined;
  jobId: string;
  state: "completed" | "failed";
  failedReason: string | undefined;
  report: RunReport | undefined;
}

/**
 * Way 2, the schedule: the worker has made a job scheduler of
 * jobs/nightly-export.yaml (`schedule-nightly-export`); the demo runs it now,
 * as the dashboard's Schedulers page does with "run now" — a job from the
 * scheduler's own template (data and options) — and follows it to its end.
 */
export async function runSchedulerWay(
  _config: RuntimeConfig,
  queues: Queues,
  out: (line: string) => void,
  signal?: AbortSignal,
): Promise<ScheduledExport> {
  const schedulerId = `${SCHEDULER_PREFIX}${DEMO_EXPORT_JOB}`;
  const scheduler = await queues.exports.getJobScheduler(schedulerId);
  if (!scheduler?.template?.data) {
    throw new RecruitSyncError(
      "job_failed",
      `the worker made no scheduler ${schedulerId}: check jobs/${DEMO_EXPORT_JOB}.yaml with 'recruit-sync jobs validate'`,
    );
  }
  out(
    `  scheduler ${schedulerId}: cron "${scheduler.pattern}" (${scheduler.tz}); next run ${scheduler.next ? new Date(scheduler.next).toISOString() : "—"}; running it now`,
  );
  const job = await queues.exports.add(scheduler.name, scheduler.template.data, scheduler.template.opts);
  const jobId = String(job.id);
  let lastState = "";
  const end = await followJob(
    queues.exports,
    jobId,
    (state, progress) => {
      // One line per state: the dashboard shows the pages as they come.
      if (state === lastState) return;
      lastState = state;
      out(`  job ${jobId} ${progressLine(state, progress)}`);
    },
    { signal },
  );
  const parsed = RunReport.safeParse(end.report);
  return {
    schedulerId,
    pattern: scheduler.pattern,
    tz: scheduler.tz,
    jobId,
    state: end.state,
    failedReason: end.failedReason,
    report: parsed.success ? parsed.data : undefined,
  };
}

import type { Queue } from "bullmq";
import type { Logger } from "pino";
import type { RuntimeConfig } from "../config/index.ts";
import { type JobFile, readJobFiles } from "../config/index.ts";
import type { Problem } from "../errors/index.ts";
import type { ExportJobDataInput } from "./job-data.ts";
import { defaultJobOptions, priorityOf } from "./queues.ts";

/** Our schedulers' ids start with this, so reconciling never touches one made by hand on the dashboard. */
export const SCHEDULER_PREFIX = "schedule-";

export interface ReconcileResult {
  added: string[];
  updated: string[];
  removed: string[];
  unchanged: string[];
  /** Definitions that could not be scheduled, with the file and path of each problem. */
  invalid: { file: string; problems: Problem[] }[];
}

/**
 * Makes the `exports` queue's job schedulers match the export definitions
 * of jobs/ that have `schedule: {cron, timezone}`: new ones added, changed
 * ones upserted, ones whose definition left (or lost its schedule) removed.
 * An invalid definition is reported and skipped; the others still run.
 */
export async function reconcileSchedulers(
  config: RuntimeConfig,
  exportsQueue: Queue<ExportJobDataInput>,
  logger: Logger,
  files?: JobFile[],
): Promise<ReconcileResult> {
  const jobFiles = files ?? (await readJobFiles(config.paths.jobsDir));
  const result: ReconcileResult = { added: [], updated: [], removed: [], unchanged: [], invalid: [] };
  const wanted = new Map<string, { pattern: string; tz: string; job: string }>();
  for (const f of jobFiles) {
    if (!f.ok) {
      // Only files that would have been scheduled matter here, but a broken file could be one: say so.
      result.invalid.push({ file: f.file, problems: f.problems });
      logger.error({ file: f.file, problems: f.problems }, "job definition invalid: not scheduled");
      continue;
    }
    const d = f.definition;
    if (d.kind !== "export" || !d.schedule) continue;
    wanted.set(`${SCHEDULER_PREFIX}${f.name}`, {
      pattern: d.schedule.cron,
      tz: d.schedule.timezone,
      job: f.name,
    });
  }

  const existing = new Map<string, { pattern?: string | undefined; tz?: string | undefined }>();
  for (const s of await exportsQueue.getJobSchedulers(0, -1)) {
    const id = s.key ?? s.id;
    if (id?.startsWith(SCHEDULER_PREFIX)) existing.set(id, { pattern: s.pattern, tz: s.tz });
  }

  const options = defaultJobOptions(config);
  for (const [id, want] of wanted) {
    const had = existing.get(id);
    if (had && had.pattern === want.pattern && had.tz === want.tz) {
      result.unchanged.push(id);
    }
    const data: ExportJobDataInput = { kind: "export", job: want.job, origin: "schedule" };
    // Upserted even when unchanged: the job template (data, options) may have moved on.
    await exportsQueue.upsertJobScheduler(
      id,
      { pattern: want.pattern, tz: want.tz },
      { name: "export", data, opts: { ...options, priority: priorityOf("schedule") } },
    );
    if (!had) result.added.push(id);
    else if (had.pattern !== want.pattern || had.tz !== want.tz) result.updated.push(id);
  }
  for (const id of existing.keys()) {
    if (wanted.has(id)) continue;
    await exportsQueue.removeJobScheduler(id);
    result.removed.push(id);
  }
  logger.info(
    {
      added: result.added,
      updated: result.updated,
      removed: result.removed,
      unchanged: result.unchanged.length,
      invalid: result.invalid.length,
    },
    "schedules reconciled with jobs/",
  );
  return result;
}

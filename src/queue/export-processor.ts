import type { Queue } from "bullmq";
import type { RunReport } from "../exports/index.ts";
import { allowedImportFile } from "../runtime/import-file-access.ts";
import { RunLockedError } from "../runtime/index.ts";
import { runExportJob } from "../runtime/run-export-job.ts";
import { ExportJobData } from "./job-data.ts";
import { createJobProcessor, type ProcessorContext } from "./job-processor.ts";

/** What a scheduled export ends with when another run of its streams was still going. */
export interface SkippedScheduledRun {
  kind: "export";
  status: "skipped";
  reason: string;
}

/**
 * The `exports` queue's processor: the job's data to the runner, its progress
 * to the job. A tick of a schedule that finds another run holding its
 * streams is skipped rather than queued behind it: the run going on refreshes
 * the same tables, and ticks that wait stack up for as long as it lasts.
 */
export function createExportProcessor(ctx: ProcessorContext, queue: () => Queue) {
  return createJobProcessor({
    ctx,
    queue,
    schema: ExportJobData,
    lockWaitMs: ctx.config.exports.lockWaitMs,
    async run(
      { origin, kind: _kind, warehouseGrant, definitionGrant, incentiveIdsGrant, ...data },
      { job, context, recorder, logger },
    ) {
      // An ids file is read as an import's is: under the import roots, or signed by the CLI that enqueued it.
      if (data.incentiveIdsFile !== undefined) {
        const grant = { by: "queue" as const, grant: incentiveIdsGrant };
        data.incentiveIdsFile = await allowedImportFile(context.config, data.incentiveIdsFile, grant);
      }
      const request = { ...data, queued: { warehouseGrant, definitionGrant } };
      try {
        const { report, budgetWaitMs } = await runExportJob(request, context, {
          onProgress: recorder.onProgress,
        });
        await recorder.done(budgetWaitMs);
        return report as RunReport | SkippedScheduledRun;
      } catch (err) {
        // Its own lock, left by this job's killed run, is no other run: that job resumes once the lease lapses.
        const ownLock = err instanceof RunLockedError && err.holder.startsWith(`job ${job.id} `);
        if (origin !== "schedule" || !(err instanceof RunLockedError) || ownLock) throw err;
        logger.info({ holder: err.holder }, "scheduled export skipped: another run of its streams is going");
        await recorder.record(undefined, `skipped: ${err.message}`);
        return { kind: "export", status: "skipped", reason: err.message } satisfies SkippedScheduledRun;
      }
    },
  });
}

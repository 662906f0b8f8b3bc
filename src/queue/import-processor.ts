import path from "node:path";
import type { Job, Queue } from "bullmq";
import type { ImportReport, OptOutReport } from "../imports/index.ts";
import { runImportJob } from "../runtime/run-import-job.ts";
import { ImportJobData, parseJobData } from "./job-data.ts";
import { invalidJobData, LEASE_LOST, type RecordedFailure, settleFailure } from "./job-outcome.ts";
import { jobProgressRecorder, jobRunContext, type ProcessorContext } from "./job-run-context.ts";
import { fileAway, processingPath } from "./watched-files.ts";

export type { ProcessorContext } from "./job-run-context.ts";

/**
 * The `imports` queue's processor: resolves the job's definition, takes the
 * run lock of (file, definition), and runs the import pipeline with progress
 * written to the job. A watched folder's file is filed in processed/ or
 * failed/ with its report when the job is done for good.
 */
export function createImportProcessor(ctx: ProcessorContext, queue: () => Queue) {
  return async (job: Job, token?: string, signal?: AbortSignal): Promise<ImportReport | OptOutReport> => {
    const logger = ctx.logger.child({ jobId: job.id, queue: job.queueName });
    const parsed = parseJobData(ImportJobData, job.data);
    if (!parsed.ok) {
      logger.warn({ problems: parsed.problems.length }, "job refused: invalid data");
      throw invalidJobData(parsed.problems);
    }
    const data = parsed.data;
    const file = data.watched ? processingPath(data.watched) : data.file;
    const recorder = jobProgressRecorder(job);
    const onFinal = data.watched
      ? async (failure: RecordedFailure) => {
          const where = await fileAway(data.watched as NonNullable<typeof data.watched>, "failed", {
            from: file,
            report: { jobId: job.id, failure: { ...failure, report: undefined }, report: failure.report },
            rejectsFile: (failure.report as { rejectsFile?: string | null } | undefined)?.rejectsFile,
          });
          logger.warn(
            { folder: data.watched?.folder, file: path.basename(where.file) },
            "watched file filed in failed/",
          );
        }
      : undefined;
    try {
      const { report, budgetWaitMs } = await runImportJob(
        {
          file,
          job: data.job,
          preset: data.preset,
          study: data.study,
          phoneCountry: data.phoneCountry,
          ...(data.watched ? { displayName: data.watched.name } : {}),
          dryRun: data.dryRun,
          force: data.force,
          runId: String(job.id),
        },
        jobRunContext(ctx, job, data.origin, logger, signal),
        { onProgress: recorder.onProgress },
      );
      await recorder.done(budgetWaitMs);
      if (data.watched) {
        await fileAway(data.watched, "processed", {
          from: file,
          report: { jobId: job.id, budgetWaitMs, ...report },
          rejectsFile: report.rejectsFile,
          warningsFile: "warningsFile" in report ? report.warningsFile : undefined,
        });
      }
      return report;
    } catch (err) {
      return await settleFailure(err, {
        job,
        token,
        queue: queue(),
        logger,
        stopping: ctx.stopping(),
        leaseLost: signal?.reason === LEASE_LOST,
        record: recorder.record,
        ...(onFinal ? { onFinal } : {}),
      });
    }
  };
}

import path from "node:path";
import type { Queue } from "bullmq";
import { runImportJob } from "../runtime/run-import-job.ts";
import { type ImportJobData, ImportJobData as ImportJobDataSchema } from "./job-data.ts";
import { createJobProcessor, type ProcessorContext } from "./job-processor.ts";
import { fileAway, processingPath } from "./watched-files.ts";

export type { ProcessorContext } from "./job-processor.ts";

/** The file the job reads: a watched file from the watcher's processing/ folder, else the path it names. */
function fileOf(data: ImportJobData): string {
  return data.watched ? processingPath(data.watched) : data.file;
}

/**
 * The `imports` queue's processor: the job's data to the runner, its progress
 * to the job. A watched folder's file is filed in processed/ or failed/ with
 * its report when the job is done for good.
 */
export function createImportProcessor(ctx: ProcessorContext, queue: () => Queue) {
  return createJobProcessor({
    ctx,
    queue,
    schema: ImportJobDataSchema,
    async run(data, { job, context, recorder }) {
      const file = fileOf(data);
      const { report, budgetWaitMs } = await runImportJob(
        {
          file,
          job: data.job,
          preset: data.preset,
          study: data.study,
          phoneCountry: data.phoneCountry,
          encoding: data.encoding,
          definition: data.definition,
          ...(data.watched ? { displayName: data.watched.name } : {}),
          dryRun: data.dryRun,
          force: data.force,
          full: data.full,
          runId: String(job.id),
        },
        context,
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
    },
    async onFinal(data, failure, { job, logger }) {
      if (!data.watched) return;
      const where = await fileAway(data.watched, "failed", {
        from: fileOf(data),
        report: { jobId: job.id, failure: { ...failure, report: undefined }, report: failure.report },
        rejectsFile: (failure.report as { rejectsFile?: string | null } | undefined)?.rejectsFile,
      });
      logger.warn(
        { folder: data.watched.folder, file: path.basename(where.file) },
        "watched file filed in failed/",
      );
    },
  });
}

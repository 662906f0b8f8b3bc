import path from "node:path";
import type { Queue } from "bullmq";
import { ImportFileError } from "../imports/index.ts";
import { isWatchedFolder } from "../runtime/import-file-access.ts";
import { runImportJob } from "../runtime/run-import-job.ts";
import { type ImportJobData, ImportJobData as ImportJobDataSchema } from "./job-data.ts";
import { createJobProcessor, type ProcessorContext } from "./job-processor.ts";
import { fileAway, processingPath } from "./watched-files.ts";

export type { ProcessorContext } from "./job-processor.ts";

/** The file the job reads: a watched file from the watcher's processing/ folder, else the path it names. */
function fileOf(data: ImportJobData): string {
  return data.watched ? processingPath(data.watched) : data.file;
}

function notWatched(folder: string): ImportFileError {
  return new ImportFileError(
    "file_not_allowed",
    `refused the watched file of ${folder}: that folder is not one of the configuration's watch: folders; a job names only a folder the worker watches`,
  );
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
      // A watched file's folder is written to (processed/, failed/): only a configured one.
      if (data.watched && !(await isWatchedFolder(context.config, data.watched.folder))) {
        throw notWatched(data.watched.folder);
      }
      const file = fileOf(data);
      const { report, budgetWaitMs } = await runImportJob(
        {
          file,
          given: { by: "queue", grant: data.fileGrant },
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
    async onFinal(data, failure, { job, logger, context }) {
      if (!data.watched || !(await isWatchedFolder(context.config, data.watched.folder))) return;
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

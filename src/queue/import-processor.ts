import { constants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Job, Queue } from "bullmq";
import type { Logger } from "pino";
import type { RuntimeConfig } from "../config/index.ts";
import {
  hashFile,
  hashValue,
  ImportFileError,
  type ImportReport,
  type OptOutReport,
  runImport,
  runOptOut,
} from "../imports/index.ts";
import {
  asRedis,
  importLockKey,
  type RedisConnection,
  resolveImportDefinition,
  withRunLock,
} from "../runtime/index.ts";
import { jobClient } from "./budget-pause.ts";
import { ImportJobData, parseJobData } from "./job-data.ts";
import { invalidJobData, LEASE_LOST, type RecordedFailure, settleFailure } from "./job-outcome.ts";
import { type JobProgress, progressWriter } from "./job-progress.ts";
import { fileAway, processingPath } from "./watched-files.ts";

export interface ProcessorContext {
  config: RuntimeConfig;
  /** For the governor, the ledger and run locks (not BullMQ's own connection). */
  redis: RedisConnection;
  logger: Logger;
  /** True once the worker has begun to shut down. */
  stopping(): boolean;
}

/** Where a job's rejects and dry-run requests go: the data folder, named after the job. */
async function outputFiles(config: RuntimeConfig, name: string, jobId: string) {
  const dir = path.resolve(config.paths.dataDir, "imports");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const base = path.join(dir, `${name}-${jobId}`);
  return { rejectsFile: `${base}.rejects.csv`, requestsFile: `${base}.requests.jsonl` };
}

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
    const progress = progressWriter(job);
    const file = data.watched ? processingPath(data.watched) : data.file;
    let budgetWaitMs = 0;
    const record = async (failure: RecordedFailure | undefined, message?: string, waitingUntil?: string) => {
      await progress.flush({
        ...progress.current,
        budgetWaitMs,
        ...(failure ? { failure } : {}),
        ...(message ? { message } : {}),
        ...(waitingUntil ? { waitingUntil } : {}),
      } as JobProgress);
    };
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
      const { definition, name } = await resolveImportDefinition(data, ctx.config.paths.jobsDir);
      await access(file, constants.R_OK).catch((err: NodeJS.ErrnoException) => {
        throw new ImportFileError(
          "file_unreadable",
          `cannot read ${file} (${err.code ?? err.message}): the worker must see the same path as whoever enqueued it`,
          { cause: err },
        );
      });
      const { client, budget } = jobClient(ctx.config, ctx.redis, {
        interactive: data.origin !== "schedule",
      });
      const outputs = await outputFiles(ctx.config, name, String(job.id));
      const fileHash = await hashFile(file, signal);
      const lockKey = importLockKey(ctx.config.redis.prefix, fileHash, hashValue(definition));
      const report = await withRunLock(
        {
          redis: ctx.redis,
          key: lockKey,
          holder: `job ${job.id} on ${os.hostname()} pid ${process.pid}`,
          leaseMs: ctx.config.queue.lockMs,
        },
        `the import of ${path.basename(data.watched?.name ?? file)} with ${name}`,
        async (lost) => {
          const runSignal = signal ? AbortSignal.any([signal, lost]) : lost;
          const common = {
            file,
            job: name,
            client,
            dryRun: data.dryRun,
            rejectsFile: outputs.rejectsFile,
            requestsFile: outputs.requestsFile,
            signal: runSignal,
          };
          if (definition.kind === "import") {
            return runImport({
              ...common,
              definition,
              ledger: { redis: asRedis(ctx.redis), prefix: ctx.config.redis.prefix },
              workDir: path.resolve(ctx.config.paths.dataDir, "spill"),
              lockKey,
              fileHash,
              force: data.force,
              concurrency: ctx.config.imports.concurrency,
              logger,
              onProgress: (p) => {
                budgetWaitMs = budget.waitedMs;
                progress.update({ ...p, budgetWaitMs });
              },
            });
          }
          return runOptOut({ ...common, definition });
        },
      );
      budgetWaitMs = budget.waitedMs;
      await progress.flush({ ...progress.current, budgetWaitMs, message: "done" } as JobProgress);
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
        record,
        ...(onFinal ? { onFinal } : {}),
      });
    }
  };
}

import os from "node:os";
import type { Job, Queue } from "bullmq";
import type { ExportResource } from "../config/export-job.ts";
import type { ExportProgress, RunReport } from "../exports/index.ts";
import { hashValue } from "../imports/index.ts";
import { type RunLock, RunLockedError, resolveExportDefinition, takeRunLock } from "../runtime/index.ts";
import { jobClient } from "./budget-pause.ts";
import type { ProcessorContext } from "./import-processor.ts";
import { ExportJobData, parseJobData } from "./job-data.ts";
import { invalidJobData, LEASE_LOST, type RecordedFailure, settleFailure } from "./job-outcome.ts";
import { type JobProgress, progressWriter } from "./job-progress.ts";

/**
 * What must not run twice at once. A DuckDB file admits one writer process,
 * so its lock is the whole warehouse; in PostgreSQL and files, two refreshes
 * of one resource would soft-delete each other's rows, so the lock is the
 * resource in that warehouse.
 */
export function exportLockKeys(
  prefix: string,
  warehouse: string,
  resources: readonly ExportResource[],
): string[] {
  const where = hashValue(warehouse).slice(0, 16);
  if (warehouse.startsWith("duckdb:")) return [`${prefix}:lock:export:${where}`];
  return [...resources].sort().map((r) => `${prefix}:lock:export:${where}:${r}`);
}

/**
 * DuckDB admits one process per file. Our run lock keeps two exports apart,
 * but a run whose lease ran out (a Redis restart longer than queue.lockMs)
 * may still have the file open while its job starts elsewhere: that is the
 * same "another run is at it" as a held run lock, to be tried again shortly,
 * not a failure of the job. DuckDB says so only in its message.
 */
function heldByAnotherProcess(err: unknown): RunLockedError | undefined {
  const text =
    err instanceof Error ? `${err.message} ${String((err.cause as Error | undefined)?.message)}` : "";
  if (!/Could not set lock on file/i.test(text)) return undefined;
  const holder = /Conflicting lock is held in (.+?)(?:\.|$)/.exec(text)?.[1] ?? "another process";
  const locked = new RunLockedError("an export into this DuckDB warehouse", holder);
  locked.cause = err;
  return locked;
}

/**
 * The `exports` queue's processor: resolves the definition, takes the locks
 * of its streams, opens the warehouse and runs the export with pages and
 * rows per resource written to the job's progress.
 */
export function createExportProcessor(ctx: ProcessorContext, queue: () => Queue) {
  return async (job: Job, token?: string, signal?: AbortSignal): Promise<RunReport> => {
    const logger = ctx.logger.child({ jobId: job.id, queue: job.queueName });
    const parsed = parseJobData(ExportJobData, job.data);
    if (!parsed.ok) {
      logger.warn({ problems: parsed.problems.length }, "job refused: invalid data");
      throw invalidJobData(parsed.problems);
    }
    const data = parsed.data;
    const progress = progressWriter(job);
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
    const locks: RunLock[] = [];
    try {
      const definition = await resolveExportDefinition(data, ctx.config.paths.jobsDir);
      const warehouse = data.warehouse ?? definition.sink ?? ctx.config.warehouse.url;
      const resources = data.resources ?? definition.resources;
      const holder = `job ${job.id} on ${os.hostname()} pid ${process.pid}`;
      for (const key of exportLockKeys(ctx.config.redis.prefix, warehouse, resources)) {
        locks.push(
          await takeRunLock(
            { redis: ctx.redis, key, holder, leaseMs: ctx.config.queue.lockMs },
            `an export into this warehouse (${key.split(":").slice(-1)[0]})`,
          ),
        );
      }
      const { client, budget } = jobClient(ctx.config, ctx.redis, {
        interactive: data.origin !== "schedule",
      });
      const { createSink } = await import("../sinks/index.ts");
      const { runExport } = await import("../exports/index.ts");
      const sink = await createSink(warehouse).catch((err: unknown) => {
        throw heldByAnotherProcess(err) ?? err;
      });
      try {
        const lost = locks.map((l) => l.lost);
        const runSignal = AbortSignal.any(signal ? [signal, ...lost] : lost);
        const report = await runExport({
          definition,
          resources,
          client,
          sink,
          signal: runSignal,
          logger,
          onProgress: (p: ExportProgress) => {
            budgetWaitMs = budget.waitedMs;
            progress.update({ ...p, budgetWaitMs });
          },
        });
        budgetWaitMs = budget.waitedMs;
        await progress.flush({ ...progress.current, budgetWaitMs, message: "done" } as JobProgress);
        return report;
      } finally {
        await sink.close();
      }
    } catch (err) {
      // Awaited here, not returned: the finally below awaits, and a rejection nobody holds yet ends the process.
      return await settleFailure(err, {
        job,
        token,
        queue: queue(),
        logger,
        stopping: ctx.stopping(),
        leaseLost: signal?.reason === LEASE_LOST,
        record,
      });
    } finally {
      for (const lock of locks.reverse()) await lock.release();
    }
  };
}

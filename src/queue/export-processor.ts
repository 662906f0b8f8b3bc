import type { Job, Queue } from "bullmq";
import type { RunReport } from "../exports/index.ts";
import { runExportJob } from "../runtime/run-export-job.ts";
import { ExportJobData, parseJobData } from "./job-data.ts";
import { invalidJobData, LEASE_LOST, settleFailure } from "./job-outcome.ts";
import { jobProgressRecorder, jobRunContext, type ProcessorContext } from "./job-run-context.ts";

/**
 * The `exports` queue's processor: the job's data to the runner, its
 * progress to the job, and whatever ended the run to what BullMQ should do
 * with the job.
 */
export function createExportProcessor(ctx: ProcessorContext, queue: () => Queue) {
  return async (job: Job, token?: string, signal?: AbortSignal): Promise<RunReport> => {
    const logger = ctx.logger.child({ jobId: job.id, queue: job.queueName });
    const parsed = parseJobData(ExportJobData, job.data);
    if (!parsed.ok) {
      logger.warn({ problems: parsed.problems.length }, "job refused: invalid data");
      throw invalidJobData(parsed.problems);
    }
    const { origin, kind: _kind, ...request } = parsed.data;
    const recorder = jobProgressRecorder(job);
    try {
      const { report, budgetWaitMs } = await runExportJob(
        request,
        jobRunContext(ctx, job, origin, logger, signal),
        { onProgress: recorder.onProgress },
      );
      await recorder.done(budgetWaitMs);
      return report;
    } catch (err) {
      // Awaited here, not returned: a rejection nobody holds yet ends the process.
      return await settleFailure(err, {
        job,
        token,
        queue: queue(),
        logger,
        stopping: ctx.stopping(),
        leaseLost: signal?.reason === LEASE_LOST,
        record: recorder.record,
      });
    }
  };
}

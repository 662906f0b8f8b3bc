import type { Queue } from "bullmq";
import { runExportJob } from "../runtime/run-export-job.ts";
import { ExportJobData } from "./job-data.ts";
import { createJobProcessor, type ProcessorContext } from "./job-processor.ts";

/** The `exports` queue's processor: the job's data to the runner, its progress to the job. */
export function createExportProcessor(ctx: ProcessorContext, queue: () => Queue) {
  return createJobProcessor({
    ctx,
    queue,
    schema: ExportJobData,
    async run({ origin: _origin, kind: _kind, ...request }, { context, recorder }) {
      const { report, budgetWaitMs } = await runExportJob(request, context, {
        onProgress: recorder.onProgress,
      });
      await recorder.done(budgetWaitMs);
      return report;
    },
  });
}

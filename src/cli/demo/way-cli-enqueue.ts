import path from "node:path";
import type { RuntimeConfig } from "../../config/index.ts";
import { ImportReport, OptOutReport } from "../../imports/index.ts";
import { enqueueImport, followJob, type Queues } from "../../queue/index.ts";
import { progressLine } from "../progress/plain-line.ts";
import { DEMO_CLI_IMPORT } from "./demo-config.ts";

export interface EnqueuedByHand {
  /** The command line that enqueues the same job. */
  command: string;
  jobId: string;
  /** The same file with the same definition was already queued or done: not enqueued again. */
  duplicate: boolean;
  state: "completed" | "failed";
  failedReason: string | undefined;
  report: ImportReport | OptOutReport | undefined;
}

/**
 * Way 3, by hand: enqueues an import exactly as `recruit-sync import FILE
 * --job NAME --study ID --wait` does (src/queue/enqueue.ts: the data checked
 * as the worker will check it, the deterministic job id) and follows it.
 */
export async function runCliWay(
  config: RuntimeConfig,
  queues: Queues,
  root: string,
  out: (line: string) => void,
  signal?: AbortSignal,
): Promise<EnqueuedByHand> {
  const { file, job, study } = DEMO_CLI_IMPORT;
  const command = `recruit-sync import ${file} --job ${job} --study ${study} --wait`;
  out(`  as: ${command}`);
  const enqueued = await enqueueImport(
    config,
    queues,
    { file: path.join(root, file), job, study, origin: "cli" },
    { givenAtShell: true },
  );
  out(
    enqueued.duplicate
      ? `  job ${enqueued.jobId}: this file with this definition is already ${enqueued.state}; not enqueued again`
      : `  job ${enqueued.jobId} enqueued`,
  );
  let lastState = "";
  const end = await followJob(
    queues.imports,
    enqueued.jobId,
    (state, progress) => {
      if (state === lastState) return;
      lastState = state;
      out(`  ${progressLine(state, progress)}`);
    },
    { signal, epoch: enqueued.epoch },
  );
  const parsed = ImportReport.or(OptOutReport).safeParse(end.report);
  return {
    command,
    jobId: enqueued.jobId,
    duplicate: enqueued.duplicate,
    state: end.state,
    failedReason: end.failedReason,
    report: parsed.success ? parsed.data : undefined,
  };
}

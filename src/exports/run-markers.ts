import type { Logger } from "pino";
import { z } from "zod";
import type { ExportJobDefinition, ExportResource } from "../config/export-job.ts";
import type { Sink } from "../sinks/index.ts";
import { errorMessage } from "./run-failure.ts";

/**
 * The runs of this job since its last success, the newest last; removed when
 * a run succeeds. A run that finds it takes that export over.
 */
const UnfinishedExport = z.object({ runIds: z.array(z.string()) });
/** Enough to cover a job retried again and again; older runs' passes are past resumeWithinMs anyway. */
const MAX_CONTINUED_RUNS = 20;

/** Marks a run of this job and resource that never got to finish. */
const ActiveRun = z.object({ runId: z.string() });

function exportKey(definition: ExportJobDefinition): string {
  return `export:${definition.name ?? "adhoc"}`;
}

/** The sync_state key of the run now exporting this resource of this job. */
export function activeRunKey(definition: ExportJobDefinition, resource: ExportResource): string {
  return `run:${definition.name ?? "adhoc"}:${resource}`;
}

/**
 * Records this run as the newest of the job's unfinished export and returns
 * the runs before it: empty when the job's last run succeeded.
 */
export async function takeOverExport(
  sink: Sink,
  definition: ExportJobDefinition,
  runId: string,
): Promise<string[]> {
  const key = exportKey(definition);
  const parsed = UnfinishedExport.safeParse(await sink.readState(key));
  const earlier = parsed.success
    ? parsed.data.runIds.filter((id) => id !== runId).slice(-MAX_CONTINUED_RUNS)
    : [];
  await sink.commit({ runId, state: { stream: key, value: { runIds: [...earlier, runId] } } });
  return earlier;
}

/** The job's export succeeded: the next run starts afresh. */
export async function exportFinished(
  sink: Sink,
  definition: ExportJobDefinition,
  runId: string,
  logger: Logger | undefined,
): Promise<void> {
  try {
    await sink.commit({ runId, state: { stream: exportKey(definition), value: null } });
  } catch (err) {
    // The next run then keeps the passes this one finished, if within resumeWithinMs: as fresh as that.
    logger?.warn({ runId, err: errorMessage(err) }, "could not record the export as finished");
  }
}

/**
 * A run of this job and resource that left its marker behind was killed:
 * say so in sync_runs, if its row still reads `running`.
 */
export async function markInterrupted(
  sink: Sink,
  key: string,
  resource: ExportResource,
  runId: string,
): Promise<void> {
  const parsed = ActiveRun.safeParse(await sink.readState(key));
  if (!parsed.success || parsed.data.runId === runId) return;
  const killed = parsed.data.runId;
  const row = (await sink.readRuns()).find(
    (r) => r.runId === killed && r.resource === resource && r.status === "running",
  );
  if (!row) return;
  await sink.commit({
    runId,
    run: { ...row, status: "interrupted", error: `stopped before finishing; run ${runId} took over` },
  });
}

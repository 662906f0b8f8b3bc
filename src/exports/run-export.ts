import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { ApiClient } from "../api/index.ts";
import { EXPORT_RESOURCES, type ExportJobDefinition, type ExportResource } from "../config/export-job.ts";
import type { Sink } from "../sinks/index.ts";
import type { BudgetWaits } from "./budget-waits.ts";
import { buildRunReport } from "./build-run-report.ts";
import { commitsInOrder } from "./commits-in-order.ts";
import { type ExportRun, exportResource } from "./export-resource.ts";
import { runFailure } from "./run-failure.ts";
import { exportFinished, takeOverExport } from "./run-markers.ts";
import { RunProgress } from "./run-progress.ts";
import type { ExportProgress, ResourceReport, RunReport } from "./run-report.ts";
import { RunStop } from "./run-stop.ts";
import { type CheckpointInfo, DEFAULT_CHECKPOINT_ROWS, DEFAULT_RESUME_WITHIN_MS } from "./stream-context.ts";
import { StreamSlots } from "./stream-slots.ts";
import { exportTableSchemas } from "./tables.ts";

export interface RunExportOptions {
  definition: ExportJobDefinition;
  client: ApiClient;
  sink: Sink;
  /** A subset of the definition's resources; all of them when omitted. */
  resources?: readonly ExportResource[];
  runId?: string;
  signal?: AbortSignal;
  /** The service's clock, for the email window; defaults to this machine's. */
  now?: () => Date;
  logger?: Logger;
  /** Rows gathered before a commit; default DEFAULT_CHECKPOINT_ROWS. */
  checkpointRows?: number;
  /**
   * A run taking over an unfinished export keeps the full-refresh passes its
   * earlier runs finished less than this long ago; default 6 hours.
   */
  resumeWithinMs?: number;
  /** Called after every committed checkpoint. */
  onCheckpoint?: (info: CheckpointInfo) => void | Promise<void>;
  /** Pages and rows per resource, after every checkpoint and at each resource's start and end. */
  onProgress?: (progress: ExportProgress) => void;
  /**
   * Streams paging at once: each study's participants, each property group,
   * each other resource is a cursor of its own. Default 1, one after another;
   * the CLI and the workers pass config `exports.streamConcurrency` (default 4).
   */
  streamConcurrency?: number;
  /**
   * The service client's budget waits (its onBudgetWait goes to `heard`):
   * during each, the streams commit what they gathered. Without it, rows are
   * committed every checkpointRows rows and at the end of each pass only.
   */
  budgetWaits?: BudgetWaits;
}

/**
 * Runs an export: the resources of the definition and their streams (a
 * study's participants, a property group, the email window, …) page into the
 * sink, up to `streamConcurrency` streams at once, each page committed
 * together with its stream's cursor. A failed resource is recorded and the
 * others still run, unless the failure would stop them all (token refused,
 * service unreachable): then the streams under way are cut short and no other
 * starts. An abort stops the run. A run that did not succeed throws a
 * RecruitSyncError whose `report` is the RunReport.
 *
 * @example
 * const sink = await createSink("duckdb:./data/warehouse.duckdb");
 * const report = await runExport({ definition, client, sink });
 * console.log(formatRunReport(report));
 */
export async function runExport(options: RunExportOptions): Promise<RunReport> {
  const { definition, logger } = options;
  const sink = commitsInOrder(options.sink);
  const runId = options.runId ?? newRunId();
  const wanted = options.resources ?? definition.resources;
  const resources = EXPORT_RESOURCES.filter((r) => wanted.includes(r));
  const startedAt = new Date();
  const t0 = performance.now();

  await sink.prepare(exportTableSchemas({ history: definition.history }));
  const continues = await takeOverExport(sink, definition, runId);
  if (continues.length > 0) logger?.info({ runId, continues }, "taking over an unfinished export");

  const stop = new RunStop(options.signal, options.client.baseUrl);
  let reports: Partial<Record<ExportResource, ResourceReport>>;
  try {
    reports = await exportResources(runOf(options, { runId, sink, continues, stop }), resources);
  } finally {
    stop.dispose();
  }

  const report = buildRunReport({
    runId,
    job: definition.name ?? null,
    warehouse: sink.displayUrl,
    resources,
    reports,
    startedAt,
    durationMs: performance.now() - t0,
    aborted: options.signal?.aborted === true,
  });
  if (report.status !== "succeeded") throw runFailure(report, stop.stop, stop.firstFailure);
  await exportFinished(sink, definition, runId, logger);
  return report;
}

function newRunId(): string {
  return `${new Date().toISOString().replace(/[-:.]/g, "").slice(0, 15)}-${randomUUID().slice(0, 8)}`;
}

/** What the run's resources share, from the caller's options and what the run opened. */
function runOf(
  options: RunExportOptions,
  opened: Pick<ExportRun, "runId" | "sink" | "continues" | "stop">,
): ExportRun {
  return {
    ...opened,
    definition: options.definition,
    client: options.client,
    now: options.now ?? (() => new Date()),
    logger: options.logger,
    checkpointRows: Math.max(1, options.checkpointRows ?? DEFAULT_CHECKPOINT_ROWS),
    resumeWithinMs: options.resumeWithinMs ?? DEFAULT_RESUME_WITHIN_MS,
    onCheckpoint: options.onCheckpoint,
    budgetWaits: options.budgetWaits,
    slots: new StreamSlots(options.streamConcurrency ?? 1),
    progress: new RunProgress(opened.runId, options.onProgress),
  };
}

/** Starts every resource at once (their streams wait for slots); their reports in the definition's order. */
async function exportResources(
  run: ExportRun,
  resources: readonly ExportResource[],
): Promise<Partial<Record<ExportResource, ResourceReport>>> {
  const running = new Map<ExportResource, Promise<ResourceReport | undefined>>();
  for (const resource of resources) {
    // Custom incentives are those the incentives table names: read after the incentives are.
    const after = resource === "custom_incentives" ? running.get("incentives") : undefined;
    running.set(resource, exportResource(run, resource, after));
  }
  const reports = await Promise.all(running.values());
  return Object.fromEntries(resources.flatMap((r, i) => (reports[i] ? [[r, reports[i]] as const] : [])));
}

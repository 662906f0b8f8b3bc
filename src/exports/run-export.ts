import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { z } from "zod";
import { type ApiClient, ApiError } from "../api/index.ts";
import { EXPORT_RESOURCES, type ExportJobDefinition, type ExportResource } from "../config/export-job.ts";
import { type ErrorCode, RecruitSyncError } from "../errors/index.ts";
import type { Sink, SyncRunRecord } from "../sinks/index.ts";
import type { BudgetWaits } from "./budget-waits.ts";
import { commitsInOrder } from "./commits-in-order.ts";
import type { ExportProgress, ResourceReport, RunReport } from "./run-report.ts";
import {
  type CheckpointInfo,
  DEFAULT_CHECKPOINT_ROWS,
  DEFAULT_RESUME_WITHIN_MS,
  newCounters,
  type StreamContext,
} from "./stream-context.ts";
import { StreamSlots } from "./stream-slots.ts";
import { exportParticipants, exportPersonProperties, exportSegments } from "./streams/collections.ts";
import { exportEmailMessages } from "./streams/email-messages.ts";
import { exportCustomIncentives, exportIncentives } from "./streams/incentives.ts";
import { exportTableSchemas } from "./tables.ts";

const STREAMS: Readonly<Record<ExportResource, (ctx: StreamContext) => Promise<void>>> = {
  participants: exportParticipants,
  email_messages: exportEmailMessages,
  incentives: exportIncentives,
  custom_incentives: exportCustomIncentives,
  segments: exportSegments,
  person_properties: exportPersonProperties,
};

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

/** Marks a run of this job and resource that never got to finish. */
const ActiveRun = z.object({ runId: z.string() });

/**
 * The runs of this job since its last success, the newest last; removed when
 * a run succeeds. A run that finds it takes that export over.
 */
const UnfinishedExport = z.object({ runIds: z.array(z.string()) });
/** Enough to cover a job retried again and again; older runs' passes are past resumeWithinMs anyway. */
const MAX_CONTINUED_RUNS = 20;

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/**
 * A failure that every other resource would meet too: the token refused, a
 * permission missing, the service out of reach. The run stops at once with
 * one line saying what to check, instead of trying each resource in turn.
 */
function stopsTheRun(err: unknown, baseUrl: string): string | undefined {
  // The queue pauses a job whose rate budget is spent for long: every resource would wait the same.
  if (err instanceof RecruitSyncError && err.code === "budget_paused") return err.message;
  // A base URL that does not lead to the service fails every resource alike.
  if (err instanceof RecruitSyncError && err.code === "service_address") return err.message;
  if (!(err instanceof ApiError)) return undefined;
  switch (err.code) {
    case "unauthorized":
      return `the service refused the API token (401 at ${err.operationId}): check RECRUIT_SYNC_API_TOKEN`;
    case "forbidden":
      return `the API token lacks a permission (403 at ${err.operationId}): give the token that permission or leave that resource out`;
    case "network_error":
    case "timeout":
      return `the service at ${baseUrl} cannot be reached (${err.message}): check RECRUIT_SYNC_BASE_URL and that the service is up`;
    default:
      return undefined;
  }
}

/** A failure's code and whether trying again may help, as a resource report gives them. */
function codeOf(err: unknown): { errorCode: ErrorCode; retryable: boolean } {
  return err instanceof RecruitSyncError
    ? { errorCode: err.code, retryable: err.retryable }
    : { errorCode: "internal", retryable: true };
}

/** What stopped the run: the one line that says what to check, and the failure behind it. */
interface Stop {
  message: string;
  err: unknown;
}

/** The error a failed run ends with: the first failure's code, retryable only when every failure is. */
function failureOf(report: RunReport, stop: Stop | undefined, cause: unknown): RecruitSyncError {
  const failed = Object.entries(report.resources).filter(([, r]) => r.status !== "succeeded");
  const interrupted = report.status === "interrupted";
  const first = failed[0]?.[1];
  if (stop && !interrupted) {
    // Every resource the stop cut short says the same: the run ends with what stopped it.
    const { errorCode, retryable } = codeOf(stop.err);
    return new RecruitSyncError(errorCode, `export ${report.runId} stopped: ${stop.message}`, {
      retryable,
      report,
      cause: stop.err,
    });
  }
  const code = interrupted
    ? "interrupted"
    : failed.length === 1
      ? (first?.errorCode ?? "export_failed")
      : "export_failed";
  const retryable = interrupted || (failed.length > 0 && failed.every(([, r]) => r.retryable === true));
  const what = failed.map(([name, r]) => `${name}: ${r.error ?? r.status}`).join("; ");
  return new RecruitSyncError(code, `export ${report.runId} ${report.status}: ${what}`, {
    retryable,
    report,
    cause,
  });
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
  const { definition, client, signal, logger } = options;
  const sink = commitsInOrder(options.sink);
  const now = options.now ?? (() => new Date());
  const runId =
    options.runId ??
    `${new Date().toISOString().replace(/[-:.]/g, "").slice(0, 15)}-${randomUUID().slice(0, 8)}`;
  const wanted = options.resources ?? definition.resources;
  const resources = EXPORT_RESOURCES.filter((r) => wanted.includes(r));
  const startedAt = new Date();
  const t0 = performance.now();
  const reports: Partial<Record<ExportResource, ResourceReport>> = {};

  await sink.prepare(exportTableSchemas({ history: definition.history }));
  const exportKey = `export:${definition.name ?? "adhoc"}`;
  const continues = await takeOver(sink, exportKey, runId);
  if (continues.length > 0) logger?.info({ runId, continues }, "taking over an unfinished export");

  // The run's own signal: the caller's abort, or a failure that stops every stream.
  const run = new AbortController();
  const onAbort = () => run.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  const slots = new StreamSlots(options.streamConcurrency ?? 1);
  const progress: ExportProgress = { kind: "export", runId, resource: null, resources: {} };
  const tell = options.onProgress;
  let stop: Stop | undefined;
  let firstError: unknown;
  /** Stops the run if `err` is a failure every stream would meet. */
  const stopOn = (err: unknown): void => {
    if (run.signal.aborted) return;
    const why = stopsTheRun(err, client.baseUrl);
    if (why === undefined) return;
    stop = { message: why, err };
    run.abort(err);
  };

  async function exportResource(resource: ExportResource, after: Promise<void> | undefined): Promise<void> {
    await after;
    if (run.signal.aborted) return;
    const counters = newCounters();
    const record: SyncRunRecord = {
      runId,
      resource,
      startedAt: new Date(),
      finishedAt: null,
      status: "running",
      pages: 0,
      rows: 0,
      requests: 0,
      error: null,
      kind: "export",
      job: definition.name ?? null,
    };
    const current = (): SyncRunRecord => ({
      ...record,
      pages: counters.pages,
      rows: counters.rows,
      requests: counters.requests,
    });
    const activeKey = `run:${definition.name ?? "adhoc"}:${resource}`;
    const moved = (status: "running" | ResourceReport["status"]) => {
      if (!tell) return;
      progress.resource = resource;
      progress.resources[resource] = { status, pages: counters.pages, rows: counters.rows };
      tell(structuredClone(progress));
    };
    let r0 = performance.now();
    // A resource starts with its first stream: one the run stopped before any slot came is not tried.
    let started: Promise<void> | undefined;
    const start = () => {
      started ??= (async () => {
        r0 = performance.now();
        record.startedAt = new Date();
        moved("running");
        await markInterrupted(sink, activeKey, resource, runId);
        await sink.commit({ runId, run: current(), state: { stream: activeKey, value: { runId } } });
      })();
      return started;
    };

    const ctx: StreamContext = {
      resource,
      client,
      sink,
      runId,
      definition,
      signal: run.signal,
      now,
      logger,
      counters,
      checkpointRows: Math.max(1, options.checkpointRows ?? DEFAULT_CHECKPOINT_ROWS),
      continues,
      resumeWithinMs: options.resumeWithinMs ?? DEFAULT_RESUME_WITHIN_MS,
      runRecord: current,
      async checkpoint(stream, commit) {
        const result = await sink.commit({ ...commit, runId, run: current() });
        moved("running");
        await options.onCheckpoint?.({ resource, stream, pages: counters.pages });
        return result;
      },
      inSlot: (work) =>
        slots.run(async () => {
          run.signal.throwIfAborted();
          try {
            await start();
            return await work();
          } catch (err) {
            // Decided before the slot is free, so that no stream waiting for it starts.
            stopOn(err);
            throw err;
          }
        }),
      whileWaiting: (listener) => options.budgetWaits?.listen(listener) ?? (() => undefined),
      answered: () => slots.open(),
      failing: stopOn,
    };
    let status: ResourceReport["status"] = "succeeded";
    let error: string | null = null;
    let errorCode: ErrorCode | undefined;
    let retryable: boolean | undefined;
    try {
      await STREAMS[resource](ctx);
      // A resource with no stream to run (nothing to read) still leaves its sync_runs row.
      await start();
    } catch (err) {
      // Stopped or aborted before any of its streams got a slot: not tried.
      if (started === undefined && run.signal.aborted) return;
      await start().catch(() => undefined);
      firstError ??= err;
      if (signal?.aborted) {
        status = "interrupted";
        error = `aborted: ${errorMessage(signal.reason ?? err)}`;
        errorCode = "interrupted";
        retryable = true;
      } else if (stop !== undefined && err === stop.err) {
        status = "failed";
        error = stop.message;
        ({ errorCode, retryable } = codeOf(stop.err));
      } else {
        status = "failed";
        error = errorMessage(err);
        ({ errorCode, retryable } = codeOf(err));
      }
      logger?.error({ resource, runId, code: errorCode, retryable }, "export of a resource failed");
    }
    const durationMs = performance.now() - r0;
    try {
      await sink.commit({
        runId,
        run: { ...current(), status, error, finishedAt: new Date(), failureCode: errorCode ?? null },
        state: { stream: activeKey, value: null },
      });
    } catch (err) {
      // The warehouse itself is failing: the report still says what happened.
      status = "failed";
      error ??= errorMessage(err);
      errorCode ??= err instanceof RecruitSyncError ? err.code : "sink_failed";
      retryable ??= err instanceof RecruitSyncError ? err.retryable : true;
    }
    moved(status);
    reports[resource] = {
      status,
      rows: counters.rows,
      pages: counters.pages,
      requests: counters.requests,
      deleted: counters.deleted,
      missing: counters.missing,
      ...(counters.passesKept > 0 ? { passesKept: counters.passesKept } : {}),
      durationMs: Math.round(durationMs),
      rowsPerSecond: durationMs > 0 ? Math.round((counters.rows / durationMs) * 1000) : 0,
      ...(error === null ? {} : { error }),
      ...(errorCode === undefined ? {} : { errorCode }),
      ...(retryable === undefined ? {} : { retryable }),
    };
    logger?.info(
      { resource, runId, status, rows: counters.rows, pages: counters.pages },
      "resource exported",
    );
  }

  try {
    const running = new Map<ExportResource, Promise<void>>();
    for (const resource of resources) {
      // Custom incentives are those the incentives table names: read after the incentives are.
      const after = resource === "custom_incentives" ? running.get("incentives") : undefined;
      running.set(resource, exportResource(resource, after));
    }
    await Promise.all(running.values());
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }

  const durationMs = performance.now() - t0;
  // In the definition's order, whichever finished first.
  const ordered = Object.fromEntries(
    resources.flatMap((r) => (reports[r] ? [[r, reports[r]] as const] : [])),
  ) as Partial<Record<ExportResource, ResourceReport>>;
  const list = Object.values(ordered);
  const rows = list.reduce((n, r) => n + r.rows, 0);
  const failed = list.some((r) => r.status !== "succeeded") || list.length < resources.length;
  const report: RunReport = {
    runId,
    job: definition.name ?? null,
    warehouse: sink.displayUrl,
    status: failed ? (signal?.aborted ? "interrupted" : "failed") : "succeeded",
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    durationMs: Math.round(durationMs),
    resources: ordered,
    totals: {
      rows,
      pages: list.reduce((n, r) => n + r.pages, 0),
      requests: list.reduce((n, r) => n + r.requests, 0),
      rowsPerSecond: durationMs > 0 ? Math.round((rows / durationMs) * 1000) : 0,
    },
  };
  if (report.status !== "succeeded") throw failureOf(report, stop, firstError);
  try {
    await sink.commit({ runId, state: { stream: exportKey, value: null } });
  } catch (err) {
    // The next run then keeps the passes this one finished, if within resumeWithinMs: as fresh as that.
    logger?.warn({ runId, err: errorMessage(err) }, "could not record the export as finished");
  }
  return report;
}

/**
 * Records this run as the newest of the job's unfinished export and returns
 * the runs before it: empty when the job's last run succeeded.
 */
async function takeOver(sink: Sink, key: string, runId: string): Promise<string[]> {
  const parsed = UnfinishedExport.safeParse(await sink.readState(key));
  const earlier = parsed.success
    ? parsed.data.runIds.filter((id) => id !== runId).slice(-MAX_CONTINUED_RUNS)
    : [];
  await sink.commit({ runId, state: { stream: key, value: { runIds: [...earlier, runId] } } });
  return earlier;
}

/**
 * A run of this job and resource that left its marker behind was killed:
 * say so in sync_runs, if its row still reads `running`.
 */
async function markInterrupted(
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

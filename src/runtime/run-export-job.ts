import type { ExportJobDefinition, ExportResource } from "../config/export-job.ts";
import type { RuntimeConfig } from "../config/index.ts";
import { BudgetWaits } from "../exports/budget-waits.ts";
import type { ExportProgress, RunReport } from "../exports/index.ts";
import type { OnWait } from "../governor/index.ts";
import { hashValue } from "../imports/file-hash.ts";
import { warehouseIdentity } from "../sinks/warehouse-identity.ts";
import { type ExportDefinitionRequest, resolveExportDefinition } from "./export-definition.ts";
import { checkExportedStudies, resendFoundMissing } from "./export-reconcile.ts";
import type { RedisConnection } from "./redis-connection.ts";
import { openRunResources, type RunContext } from "./run-context.ts";
import { joinSignals, withRunLocks } from "./run-lock.ts";
import type { ServiceClient } from "./service-client.ts";
import { checkDefinitionGrant, checkWarehouseOverride } from "./warehouse-grant.ts";

/** One export to run, as any way in asks for it. */
export interface ExportRunRequest extends ExportDefinitionRequest {
  /** duckdb:PATH, postgres://… or file:DIR; default the definition's sink, else the configured warehouse. */
  warehouse?: string | undefined;
  /**
   * Set for queued jobs, whose data anyone with the ops password can write: a
   * warehouse override must be the definition's or the configuration's, or
   * carry the grant of whoever enqueued it with the token; a whole definition
   * must carry the grant of the worker that scheduled it (warehouse-grant.ts).
   */
  queued?: { warehouseGrant: string | undefined; definitionGrant: string | undefined } | undefined;
}

export interface ExportRunCallbacks {
  /** Pages and rows per resource, with what the run waited on the budget so far. */
  onProgress?: (progress: ExportProgress, budgetWaitMs: number) => void;
}

export interface ExportRunOutcome {
  report: RunReport;
  budgetWaitMs: number;
}

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
  const identity = warehouseIdentity(warehouse);
  const where = hashValue(identity.key).slice(0, 16);
  if (identity.singleWriter) return [`${prefix}:lock:export:${where}`];
  return [...resources].sort().map((r) => `${prefix}:lock:export:${where}:${r}`);
}

/**
 * Runs one export, whichever way it came in: resolves the definition, takes
 * the run locks of its streams in that warehouse (so two runs never
 * soft-delete each other's rows), opens the service client and the sink, runs
 * the streams and closes everything in reverse order. A run that did not
 * succeed throws a RecruitSyncError whose `report` is the RunReport.
 *
 * @example
 * const { report } = await runExportJob({ job: "nightly-export" }, { config, holder: `pid ${process.pid}` });
 */
export async function runExportJob(
  request: ExportRunRequest,
  ctx: RunContext,
  callbacks: ExportRunCallbacks = {},
): Promise<ExportRunOutcome> {
  const { definition, warehouse } = await resolveExportRun(request, ctx.config);
  const locks = exportLockKeys(ctx.config.redis.prefix, warehouse, definition.resources).map((key) => ({
    key,
    what: `an export into this warehouse (${key.split(":").slice(-1)[0]})`,
  }));
  // The streams commit during long budget waits; the way in still hears of every wait.
  const budgetWaits = new BudgetWaits();
  const onBudgetWait: OnWait = (ms, until) => {
    budgetWaits.heard(ms);
    ctx.onBudgetWait?.(ms, until);
  };
  const run = await openRunResources(
    { ...ctx, onBudgetWait },
    { redis: true, service: true, why: "run locks live there" },
  );
  let outcome: ExportRunOutcome;
  try {
    const { redis, service } = run;
    if (!redis || !service) throw new Error("openRunResources gave no Redis or service client");
    outcome = await withRunLocks(
      { redis, holder: ctx.holder, leaseMs: ctx.config.queue.lockMs },
      locks,
      (lost) => exportInto(warehouse, { definition, redis, service, budgetWaits, lost }, ctx, callbacks),
    );
  } finally {
    await run.close();
  }
  // After the warehouse is closed and the locks are free: the resend is an import of its own.
  if (warehouse === ctx.config.warehouse.url) await resendFoundMissing(ctx, outcome.report);
  return outcome;
}

/**
 * The definition and the warehouse of a run. A queued job's whole definition,
 * or its warehouse override, must carry its grant (warehouse-grant.ts).
 */
async function resolveExportRun(
  request: ExportRunRequest,
  config: RuntimeConfig,
): Promise<{ definition: ExportJobDefinition; warehouse: string }> {
  if (request.definition && request.queued) {
    checkDefinitionGrant(config, request.definition, request.queued.definitionGrant);
  }
  const definition = await resolveExportDefinition(request, config.paths.jobsDir);
  if (request.warehouse !== undefined && request.queued) {
    checkWarehouseOverride(config, { warehouse: request.warehouse, grant: request.queued.warehouseGrant }, [
      definition.sink,
      config.warehouse.url,
    ]);
  }
  return { definition, warehouse: request.warehouse ?? definition.sink ?? config.warehouse.url };
}

/** What an export runs with, once its locks are taken. */
interface LockedExport {
  definition: ExportJobDefinition;
  redis: RedisConnection;
  service: ServiceClient;
  budgetWaits: BudgetWaits;
  /** Aborts once a lock's lease could not be renewed. */
  lost: AbortSignal | undefined;
}

/** Opens the sink, exports into it, checks the exported studies against what was sent, and closes it. */
async function exportInto(
  warehouse: string,
  run: LockedExport,
  ctx: RunContext,
  callbacks: ExportRunCallbacks,
): Promise<ExportRunOutcome> {
  const { definition, service } = run;
  const [{ createSink }, { runExport }] = await Promise.all([
    import("../sinks/create-sink.ts"),
    import("../exports/index.ts"),
  ]);
  // A DuckDB file another process has open fails here as WarehouseFileLockedError, naming that process.
  const sink = await createSink(warehouse);
  try {
    const signal = joinSignals(ctx.signal, run.lost);
    const startedAt = new Date();
    const report = await runExport({
      definition,
      client: service.client,
      sink,
      streamConcurrency: ctx.config.exports.streamConcurrency,
      budgetWaits: run.budgetWaits,
      ...(signal ? { signal } : {}),
      ...(ctx.logger ? { logger: ctx.logger } : {}),
      onProgress: (p) => callbacks.onProgress?.(p, service.budget.waitedMs),
    });
    const checks = await checkExportedStudies({
      config: ctx.config,
      definition,
      report,
      sink,
      redis: run.redis,
      startedAt,
      logger: ctx.logger,
    });
    if (checks.length > 0) {
      report.reconciliation = checks.map(({ studyId, verified, missing }) => ({
        studyId,
        verified,
        missing,
      }));
    }
    return { report, budgetWaitMs: service.budget.waitedMs };
  } finally {
    await sink.close();
  }
}

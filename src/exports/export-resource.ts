import type { Logger } from "pino";
import type { ApiClient } from "../api/index.ts";
import type { ExportJobDefinition, ExportResource } from "../config/export-job.ts";
import type { Sink, SyncRunRecord } from "../sinks/index.ts";
import type { BudgetWaits } from "./budget-waits.ts";
import { resourceReport } from "./build-run-report.ts";
import { type ResourceFailure, resourceFailure, sinkFailure } from "./run-failure.ts";
import { activeRunKey, markInterrupted } from "./run-markers.ts";
import type { RunProgress } from "./run-progress.ts";
import type { ResourceReport } from "./run-report.ts";
import type { RunStop } from "./run-stop.ts";
import { type CheckpointInfo, newCounters, type StreamContext } from "./stream-context.ts";
import type { StreamSlots } from "./stream-slots.ts";
import { exportParticipants, exportPersonProperties, exportSegments } from "./streams/collections.ts";
import { exportEmailMessages } from "./streams/email-messages.ts";
import { exportCustomIncentives, exportIncentives } from "./streams/incentives.ts";

const STREAMS: Readonly<Record<ExportResource, (ctx: StreamContext) => Promise<void>>> = {
  participants: exportParticipants,
  email_messages: exportEmailMessages,
  incentives: exportIncentives,
  custom_incentives: exportCustomIncentives,
  segments: exportSegments,
  person_properties: exportPersonProperties,
};

/** What every resource of one run shares. */
export interface ExportRun {
  runId: string;
  definition: ExportJobDefinition;
  client: ApiClient;
  /** The run's sink, its commits applied in order (commits-in-order.ts). */
  sink: Sink;
  now: () => Date;
  logger: Logger | undefined;
  /** The earlier runs of the unfinished export this run takes over. */
  continues: readonly string[];
  checkpointRows: number;
  resumeWithinMs: number;
  onCheckpoint: ((info: CheckpointInfo) => void | Promise<void>) | undefined;
  budgetWaits: BudgetWaits | undefined;
  slots: StreamSlots;
  stop: RunStop;
  progress: RunProgress;
}

/** One resource within the run: its counters, its sync_runs row, and when it started. */
class ResourceRun {
  readonly counters = newCounters();
  readonly activeKey: string;
  readonly #record: SyncRunRecord;
  #t0 = performance.now();
  #started: Promise<void> | undefined;

  constructor(
    readonly run: ExportRun,
    readonly resource: ExportResource,
  ) {
    this.activeKey = activeRunKey(run.definition, resource);
    this.#record = {
      runId: run.runId,
      resource,
      startedAt: new Date(),
      finishedAt: null,
      status: "running",
      pages: 0,
      rows: 0,
      requests: 0,
      error: null,
      kind: "export",
      job: run.definition.name ?? null,
    };
  }

  /** The sync_runs row as it stands, counters included. */
  readonly row = (): SyncRunRecord => ({
    ...this.#record,
    pages: this.counters.pages,
    rows: this.counters.rows,
    requests: this.counters.requests,
  });

  get started(): boolean {
    return this.#started !== undefined;
  }

  /** A resource starts with its first stream: one the run stopped before any slot came is not tried. */
  start(): Promise<void> {
    this.#started ??= this.#begin();
    return this.#started;
  }

  async #begin(): Promise<void> {
    const { sink, runId } = this.run;
    this.#t0 = performance.now();
    this.#record.startedAt = new Date();
    this.moved("running");
    await markInterrupted(sink, this.activeKey, this.resource, runId);
    await sink.commit({ runId, run: this.row(), state: { stream: this.activeKey, value: { runId } } });
  }

  moved(status: "running" | ResourceReport["status"]): void {
    this.run.progress.moved(this.resource, status, this.counters);
  }

  elapsedMs(): number {
    return performance.now() - this.#t0;
  }

  /** The resource's last commit: its sync_runs row as it ended, its marker of a run under way removed. */
  async finish(failure: ResourceFailure | undefined): Promise<ResourceFailure | undefined> {
    try {
      await this.run.sink.commit({
        runId: this.run.runId,
        run: {
          ...this.row(),
          status: failure?.status ?? "succeeded",
          error: failure?.error ?? null,
          finishedAt: new Date(),
          failureCode: failure?.errorCode ?? null,
        },
        state: { stream: this.activeKey, value: null },
      });
      return failure;
    } catch (err) {
      return sinkFailure(failure, err);
    }
  }
}

/** What the resource's streams get: the run's client, sink, slots and stop, and this resource's counters. */
function streamContext(r: ResourceRun): StreamContext {
  const { run, resource, counters } = r;
  return {
    resource,
    client: run.client,
    sink: run.sink,
    runId: run.runId,
    definition: run.definition,
    signal: run.stop.signal,
    now: run.now,
    logger: run.logger,
    counters,
    checkpointRows: run.checkpointRows,
    continues: run.continues,
    resumeWithinMs: run.resumeWithinMs,
    runRecord: r.row,
    async checkpoint(stream, commit) {
      const result = await run.sink.commit({ ...commit, runId: run.runId, run: r.row() });
      r.moved("running");
      await run.onCheckpoint?.({ resource, stream, pages: counters.pages });
      return result;
    },
    inSlot: (work) =>
      run.slots.run(async () => {
        run.stop.signal.throwIfAborted();
        try {
          await r.start();
          return await work();
        } catch (err) {
          // Decided before the slot is free, so that no stream waiting for it starts.
          run.stop.stopOn(err);
          throw err;
        }
      }),
    whileWaiting: (listener) => run.budgetWaits?.listen(listener) ?? (() => undefined),
    answered: () => run.slots.open(),
    failing: run.stop.stopOn,
  };
}

/**
 * Exports one resource once `after` is done: its streams page in the run's
 * slots, and its sync_runs row says how it went. Returns its report, or
 * undefined when the run stopped before any of its streams got a slot.
 */
export async function exportResource(
  run: ExportRun,
  resource: ExportResource,
  after: Promise<unknown> | undefined,
): Promise<ResourceReport | undefined> {
  await after;
  if (run.stop.signal.aborted) return undefined;
  const r = new ResourceRun(run, resource);
  let failure: ResourceFailure | undefined;
  try {
    await STREAMS[resource](streamContext(r));
    // A resource with no stream to run (nothing to read) still leaves its sync_runs row.
    await r.start();
  } catch (err) {
    // Stopped or aborted before any of its streams got a slot: not tried.
    if (!r.started && run.stop.signal.aborted) return undefined;
    await r.start().catch(() => undefined);
    run.stop.failed(err);
    failure = resourceFailure(err, run.stop);
    const { errorCode: code, retryable } = failure;
    run.logger?.error({ resource, runId: run.runId, code, retryable }, "export of a resource failed");
  }
  const durationMs = r.elapsedMs();
  failure = await r.finish(failure);
  const status = failure?.status ?? "succeeded";
  r.moved(status);
  const { rows, pages } = r.counters;
  run.logger?.info({ resource, runId: run.runId, status, rows, pages }, "resource exported");
  return resourceReport(r.counters, durationMs, failure);
}

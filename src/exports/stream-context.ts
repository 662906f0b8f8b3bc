import type { Logger } from "pino";
import type { ApiClient, PagingOptions } from "../api/index.ts";
import type { ExportJobDefinition, ExportResource } from "../config/export-job.ts";
import type { Commit, CommitResult, Sink, SyncRunRecord } from "../sinks/index.ts";

/** Counters of one resource within one run; they feed sync_runs and the report. */
export interface ResourceCounters {
  pages: number;
  rows: number;
  requests: number;
  /** Rows marked `_deleted_at` by a full refresh. */
  deleted: number;
  /** Ids the service answered 404 for (incentives). */
  missing: number;
  /** Full-refresh passes an earlier run of the same unfinished export completed, not read again. */
  passesKept: number;
}

export interface CheckpointInfo {
  resource: ExportResource;
  stream: string;
  /** Pages committed so far by this resource in this run. */
  pages: number;
}

/**
 * Rows gathered from pages before one commit. A commit per page of 100 would
 * spend most of its time on transaction overhead. A killed run leaves
 * uncommitted at most one commit in flight, the rows gathered for the next
 * one and the page fetched ahead: twice this, in whole pages, plus a page.
 */
export const DEFAULT_CHECKPOINT_ROWS = 5000;

/**
 * How old a pass finished by an earlier run of the same unfinished export may
 * be for a run taking it over to keep it instead of reading it again. A
 * killed or requeued job is taken up within minutes; a job that next runs on
 * its schedule, hours later, reads everything again.
 */
export const DEFAULT_RESUME_WITHIN_MS = 6 * 60 * 60 * 1000;

/** What every stream gets: where to read, where to write, and how far it got. */
export interface StreamContext {
  resource: ExportResource;
  client: ApiClient;
  sink: Sink;
  runId: string;
  definition: ExportJobDefinition;
  signal: AbortSignal | undefined;
  now: () => Date;
  logger: Logger | undefined;
  counters: ResourceCounters;
  /** Commit once this many rows are gathered (and at the end of a pass). */
  checkpointRows: number;
  /**
   * The earlier runs of the export this run takes over: runs of the same job
   * that did not succeed, the newest last. Empty when the last run succeeded.
   */
  continues: readonly string[];
  /** A pass one of `continues` finished less than this long ago is not read again. */
  resumeWithinMs: number;
  /** The sync_runs row as it stands, counters included. */
  runRecord(): SyncRunRecord;
  /** Commits a checkpoint with the current sync_runs row, then tells onCheckpoint. */
  checkpoint(stream: string, commit: Omit<Commit, "runId" | "run">): Promise<CommitResult>;
  /**
   * Runs one stream — one cursor, or one stream of single reads — in a slot
   * of the run: a bounded number of streams page at once, across resources,
   * all through the same client and rate governor. Every request a resource
   * makes is made inside a slot; each stream keeps its own state and commits
   * in its own order.
   */
  inSlot<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Calls `listener` whenever the run's requests wait on the rate budget long
   * enough to commit in (budget-waits.ts), until the returned function is called.
   */
  whileWaiting(listener: () => void): () => void;
  /** The service answered one of this stream's requests: the run opens its other slots. */
  answered(): void;
  /**
   * A request of this stream failed: a failure every stream would meet (the
   * token refused, the service out of reach, the budget paused) stops the
   * run's other streams at once, not once this one has unwound.
   */
  failing(err: unknown): void;
}

export function newCounters(): ResourceCounters {
  return { pages: 0, rows: 0, requests: 0, deleted: 0, missing: 0, passesKept: 0 };
}

/** A stream's page requests from `startCursor` (the first page without one), at the job's page size. */
export function pagingFrom(ctx: StreamContext, startCursor: string | undefined): PagingOptions {
  return {
    pageSize: ctx.definition.pageSize,
    ...(startCursor === undefined ? {} : { startCursor }),
    signal: ctx.signal,
  };
}

import type { Logger } from "pino";
import type { ApiClient } from "../api/index.ts";
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
}

export interface CheckpointInfo {
  resource: ExportResource;
  stream: string;
  /** Pages committed so far by this resource in this run. */
  pages: number;
}

/**
 * Rows gathered from pages before one commit. A commit per page of 100 would
 * spend most of its time on transaction overhead; a killed run re-reads at
 * most this many rows.
 */
export const DEFAULT_CHECKPOINT_ROWS = 5000;

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
  /** The sync_runs row as it stands, counters included. */
  runRecord(): SyncRunRecord;
  /** Commits a checkpoint with the current sync_runs row, then tells onCheckpoint. */
  checkpoint(stream: string, commit: Omit<Commit, "runId" | "run">): Promise<CommitResult>;
}

export function newCounters(): ResourceCounters {
  return { pages: 0, rows: 0, requests: 0, deleted: 0, missing: 0 };
}

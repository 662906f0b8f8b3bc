/**
 * The warehouse as the exports see it, whatever the database underneath.
 * This folder may import only src/errors, so a table is described here in
 * neutral terms; src/exports derives these descriptions from the API's zod
 * schemas.
 */

/** A view kept beside a history table; `sql` is its SELECT, valid in DuckDB and PostgreSQL alike. */
export interface HistoryView {
  name: string;
  description: string;
  sql: string;
  /** Its columns and what they mean, for the data dictionary (a test holds them to the database's). */
  columns: readonly { name: string; description: string }[];
}

/**
 * Versions of an exported table's rows (slowly changing dimension, type 2):
 * a row of the history table is one state of one entity and the time span
 * it held. A version is opened only when one of `tracked` changed; a version
 * is closed when its entity changes again or is gone from the service.
 */
export interface HistorySpec {
  /** The history table, e.g. `participants_history`. */
  table: string;
  /** The entity's own identity: the exported table's one primary-key column, never a compound. */
  key: string;
  /** Columns of the exported table whose change opens a version, in a fixed order (it feeds the hash). */
  tracked: readonly string[];
  /** The as-of query: a DuckDB table macro, a PostgreSQL function returning rows of the history table. */
  asOf: string;
  /** Views over the history table, created with it. */
  views?: readonly HistoryView[];
}

/** Column types every sink can store. Each sink maps them to its own SQL types. */
export const COLUMN_TYPES = [
  "text",
  "bigint",
  "double",
  "boolean",
  "date",
  "timestamp",
  "text_array",
  "json",
] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

export interface ColumnSchema {
  /** snake_case, [a-z_][a-z0-9_]*. */
  name: string;
  type: ColumnType;
  /** What the column means, for the data dictionary (docs/warehouse.md). */
  description?: string;
}

/** One exported table. The sink adds the system columns of SYSTEM_COLUMNS to it. */
export interface TableSchema {
  name: string;
  columns: readonly ColumnSchema[];
  /** Column names; each must be in `columns`. */
  primaryKey: readonly string[];
  /** Keep versions of its rows in a history table too (./history/history-spec.ts). */
  history?: HistorySpec;
}

/**
 * A row as the exports hand it over: column name → value. Values by column type:
 * text → string; bigint → number or bigint; double → number; boolean → boolean;
 * date → "YYYY-MM-DD"; timestamp → Date or ISO string; text_array → string[];
 * json → any JSON-serialisable value. `undefined` and `null` are NULL.
 * `_raw` carries the record as received.
 */
export type Row = Readonly<Record<string, unknown>>;

/** A record of one resource's part in one run: a row of sync_runs. */
export interface SyncRunRecord {
  runId: string;
  resource: string;
  startedAt: Date;
  finishedAt: Date | null;
  status: SyncRunStatus;
  pages: number;
  rows: number;
  requests: number;
  error: string | null;
  /** What ran: an export (the default), an import or an opt-out list. */
  kind?: SyncRunKind;
  /** The job definition's name, when it has one. */
  job?: string | null;
  /** An import's file as the run read it (a resend of missing people reads it again). */
  file?: string | null;
  /** An import's file, by SHA-256 of its bytes. */
  fileHash?: string | null;
  /** The run's counts as its report has them (imported, rejected, …). */
  counts?: Readonly<Record<string, number>> | null;
  /** The stable code of the failure that ended the run (docs/errors.md). */
  failureCode?: string | null;
}
export const SYNC_RUN_KINDS = ["export", "import", "opt_out"] as const;
export type SyncRunKind = (typeof SYNC_RUN_KINDS)[number];
export const SYNC_RUN_STATUSES = ["running", "succeeded", "failed", "interrupted"] as const;
export type SyncRunStatus = (typeof SYNC_RUN_STATUSES)[number];

/**
 * Marks rows of `table` within `scope` as deleted (sets `_deleted_at`) unless
 * one of `keepRunIds` wrote them: what a full refresh did not see again.
 */
export interface SoftDelete {
  table: string;
  /** column → value; an empty scope is the whole table. */
  scope: Readonly<Record<string, string>>;
  keepRunIds: readonly string[];
}

/**
 * Everything one checkpoint writes. A sink applies all of it or none of it:
 * rows, deletions, the stream's state and its sync_runs row.
 */
export interface Commit {
  runId: string;
  upsert?: { table: string; rows: readonly Row[] };
  softDelete?: SoftDelete;
  /** The stream's cursor/state; `value: null` removes it. */
  state?: { stream: string; value: unknown };
  run?: SyncRunRecord;
}

export interface CommitResult {
  upserted: number;
  deleted: number;
}

/** Reads the values of one column, optionally skipping rows whose other column is in a set. */
export interface KeyQuery {
  table: string;
  column: string;
  /** Only rows whose `column` value is not in `notIn` (NULLs are kept). */
  exclude?: { column: string; notIn: readonly string[] };
  /** Skip rows that carry `_deleted_at`. */
  liveOnly?: boolean;
}

export type SinkKind = "duckdb" | "postgres" | "file";

/**
 * A warehouse. Open with createSink(url), call prepare() with the tables it
 * will hold, then commit() checkpoints. Not safe for concurrent commits from
 * one process: the exports commit one page at a time.
 */
export interface Sink {
  readonly kind: SinkKind;
  /** The URL with any password removed, for logs and reports. */
  readonly displayUrl: string;
  /** Creates bookkeeping and the given tables, or migrates them forward (adds columns, drops none). */
  prepare(tables: readonly TableSchema[]): Promise<void>;
  /** The state last committed for a stream, or undefined. */
  readState(stream: string): Promise<unknown>;
  /** Applies one checkpoint atomically. */
  commit(commit: Commit): Promise<CommitResult>;
  /** Distinct values of a column (e.g. ids not yet in a final state). */
  readKeys(query: KeyQuery): Promise<string[]>;
  /** A table's rows as plain JSON-friendly objects ordered by primary key; for inspection and tests. */
  readTable(table: string): Promise<Record<string, unknown>[]>;
  /** sync_runs, oldest first. */
  readRuns(): Promise<SyncRunRecord[]>;
  close(): Promise<void>;
}

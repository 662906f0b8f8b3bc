export { createSink } from "./create-sink.ts";
export { DUCKDB_TYPES, DuckDbSink } from "./duckdb/duckdb-sink.ts";
export { FileSink, MANIFEST_FILE } from "./file/file-sink.ts";
export { FileSinkOptions } from "./file/file-sink-options.ts";
export { POSTGRES_TYPES, PostgresSink, type PostgresSinkOptions } from "./postgres/postgres-sink.ts";
export { allColumns, SYSTEM_COLUMNS } from "./system-columns.ts";
export {
  COLUMN_TYPES,
  type ColumnSchema,
  type ColumnType,
  type Commit,
  type CommitResult,
  type KeyQuery,
  type Row,
  type Sink,
  type SinkKind,
  type SoftDelete,
  SYNC_RUN_STATUSES,
  type SyncRunRecord,
  type SyncRunStatus,
  type TableSchema,
} from "./types.ts";
export {
  anchorWarehouseUrl,
  parseWarehouseUrl,
  type WarehouseTarget,
  WarehouseUrl,
} from "./warehouse-url.ts";

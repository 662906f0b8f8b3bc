import { UPSERT_RUN_CONFLICT } from "../run-record.ts";

/** Fixed statements of the DuckDB sink; values are always bound as $n parameters. */
export const DUCKDB_SQL = {
  createMigrations: `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name VARCHAR NOT NULL,
  applied_at TIMESTAMP NOT NULL
)`,
  appliedMigrations: "SELECT version FROM schema_migrations",
  recordMigration: "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3::TIMESTAMP)",
  tableColumns:
    "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'main' AND table_name = $1",
  readState: "SELECT CAST(value AS VARCHAR) AS value FROM sync_state WHERE stream = $1",
  upsertState: `INSERT INTO sync_state (stream, value, run_id, updated_at) VALUES ($1, $2::JSON, $3, $4::TIMESTAMP)
ON CONFLICT (stream) DO UPDATE SET value = EXCLUDED.value, run_id = EXCLUDED.run_id, updated_at = EXCLUDED.updated_at`,
  deleteState: "DELETE FROM sync_state WHERE stream = $1",
  upsertRun: `INSERT INTO sync_runs (run_id, resource, started_at, finished_at, status, pages, rows, requests, error,
  kind, job, file_hash, counts, failure_code, file)
VALUES ($1, $2, $3::TIMESTAMP, $4::TIMESTAMP, $5, $6, $7, $8, $9, $10, $11, $12, $13::JSON, $14, $15)
${UPSERT_RUN_CONFLICT}`,
  readRuns: `SELECT run_id, resource, started_at, finished_at, status, pages, rows, requests, error,
  kind, job, file_hash, CAST(counts AS VARCHAR) AS counts, failure_code, file
FROM sync_runs ORDER BY started_at, run_id, resource`,
  engineSettings: `SELECT current_setting('memory_limit') AS "memoryLimit", current_setting('threads') AS threads,
  current_setting('checkpoint_threshold') AS "checkpointThreshold",
  current_setting('allocator_bulk_deallocation_flush_threshold') AS "allocatorFlushThreshold",
  (SELECT options['row_group_size'] FROM duckdb_databases() WHERE database_name = $1) AS "rowGroupSize"`,
} as const;

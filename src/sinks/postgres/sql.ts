import { UPSERT_RUN_CONFLICT } from "../run-record.ts";

/** Fixed statements of the PostgreSQL sink; values are always bound as $n parameters. */
export const POSTGRES_SQL = {
  /** Serialises schema changes of workers that start at once; released at commit. */
  migrationLock: "SELECT pg_advisory_xact_lock(hashtext('recruit-sync:migrations'))",
  createMigrations: `CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`,
  appliedMigrations: "SELECT version FROM schema_migrations",
  recordMigration: "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
  tableColumns:
    "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1",
  readState: "SELECT value FROM sync_state WHERE stream = $1",
  upsertState: `INSERT INTO sync_state (stream, value, run_id, updated_at) VALUES ($1, $2::jsonb, $3, $4)
ON CONFLICT (stream) DO UPDATE SET value = EXCLUDED.value, run_id = EXCLUDED.run_id, updated_at = EXCLUDED.updated_at`,
  deleteState: "DELETE FROM sync_state WHERE stream = $1",
  upsertRun: `INSERT INTO sync_runs (run_id, resource, started_at, finished_at, status, pages, rows, requests, error,
  kind, job, file_hash, counts, failure_code, file)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14, $15)
${UPSERT_RUN_CONFLICT}`,
  readRuns: `SELECT run_id, resource, started_at, finished_at, status, pages, rows, requests, error,
  kind, job, file_hash, CAST(counts AS text) AS counts, failure_code, file
FROM sync_runs ORDER BY started_at, run_id, resource`,
} as const;

/**
 * Numbered migrations of the bookkeeping tables. Append only: a released
 * migration is never edited, a change is a new number. Exported tables are
 * derived from the API schemas and migrated by adding columns (see ../ddl.ts).
 */
export const POSTGRES_MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: "sync_runs",
    sql: `CREATE TABLE IF NOT EXISTS sync_runs (
  run_id text NOT NULL,
  resource text NOT NULL,
  started_at timestamptz NOT NULL,
  finished_at timestamptz,
  status text NOT NULL,
  pages bigint NOT NULL DEFAULT 0,
  rows bigint NOT NULL DEFAULT 0,
  requests bigint NOT NULL DEFAULT 0,
  error text,
  PRIMARY KEY (run_id, resource)
)`,
  },
  {
    version: 2,
    name: "sync_state",
    sql: `CREATE TABLE IF NOT EXISTS sync_state (
  stream text PRIMARY KEY,
  value jsonb NOT NULL,
  run_id text,
  updated_at timestamptz NOT NULL
)`,
  },
  {
    version: 3,
    name: "sync_runs of every kind",
    sql: `ALTER TABLE sync_runs ADD COLUMN kind text DEFAULT 'export';
ALTER TABLE sync_runs ADD COLUMN job text;
ALTER TABLE sync_runs ADD COLUMN file text;
ALTER TABLE sync_runs ADD COLUMN file_hash text;
ALTER TABLE sync_runs ADD COLUMN counts jsonb;
ALTER TABLE sync_runs ADD COLUMN failure_code text;`,
  },
  {
    version: 4,
    name: "sync_log",
    // The columns of SYNC_LOG_TABLE (src/synclog/table.ts) with the system columns, as the sink would make them.
    sql: `CREATE TABLE IF NOT EXISTS sync_log (
  "run_id" text,
  "person_digest" text,
  "job" text,
  "study_id" text,
  "identifier" text,
  "source_rows" jsonb,
  "outcome" text,
  "reason" text,
  "import_id" text,
  "verification" text,
  "logged_at" timestamptz,
  "checked_at" timestamptz,
  "_raw" jsonb,
  "_synced_at" timestamptz,
  "_run_id" text,
  "_deleted_at" timestamptz,
  PRIMARY KEY ("run_id", "person_digest")
)`,
  },
  {
    version: 5,
    name: "sync_log codes",
    // A refusal's codes, as the rejects file's `_reject_code`. The key stays: the sink's upserts need it here.
    sql: `ALTER TABLE sync_log ADD COLUMN IF NOT EXISTS codes text`,
  },
];

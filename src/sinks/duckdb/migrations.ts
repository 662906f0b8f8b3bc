/**
 * Numbered migrations of the bookkeeping tables. Append only: a released
 * migration is never edited, a change is a new number. Exported tables are
 * derived from the API schemas and migrated by adding columns (see ddl.ts).
 */
export const DUCKDB_MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: "sync_runs",
    sql: `CREATE TABLE IF NOT EXISTS sync_runs (
  run_id VARCHAR NOT NULL,
  resource VARCHAR NOT NULL,
  started_at TIMESTAMP NOT NULL,
  finished_at TIMESTAMP,
  status VARCHAR NOT NULL,
  pages BIGINT NOT NULL DEFAULT 0,
  rows BIGINT NOT NULL DEFAULT 0,
  requests BIGINT NOT NULL DEFAULT 0,
  error VARCHAR,
  PRIMARY KEY (run_id, resource)
)`,
  },
  {
    version: 2,
    name: "sync_state",
    sql: `CREATE TABLE IF NOT EXISTS sync_state (
  stream VARCHAR PRIMARY KEY,
  value JSON NOT NULL,
  run_id VARCHAR,
  updated_at TIMESTAMP NOT NULL
)`,
  },
  {
    version: 3,
    name: "sync_runs of every kind",
    sql: `ALTER TABLE sync_runs ADD COLUMN kind VARCHAR DEFAULT 'export';
ALTER TABLE sync_runs ADD COLUMN job VARCHAR;
ALTER TABLE sync_runs ADD COLUMN file VARCHAR;
ALTER TABLE sync_runs ADD COLUMN file_hash VARCHAR;
ALTER TABLE sync_runs ADD COLUMN counts JSON;
ALTER TABLE sync_runs ADD COLUMN failure_code VARCHAR;`,
  },
  {
    version: 4,
    name: "sync_log",
    // The columns of SYNC_LOG_TABLE (src/synclog/table.ts) with the system columns, as the sink would make them.
    sql: `CREATE TABLE IF NOT EXISTS sync_log (
  "run_id" VARCHAR,
  "person_digest" VARCHAR,
  "job" VARCHAR,
  "study_id" VARCHAR,
  "identifier" VARCHAR,
  "source_rows" JSON,
  "outcome" VARCHAR,
  "reason" VARCHAR,
  "import_id" VARCHAR,
  "verification" VARCHAR,
  "logged_at" TIMESTAMP,
  "checked_at" TIMESTAMP,
  "_raw" JSON,
  "_synced_at" TIMESTAMP,
  "_run_id" VARCHAR,
  "_deleted_at" TIMESTAMP,
  PRIMARY KEY ("run_id", "person_digest")
)`,
  },
  {
    version: 5,
    name: "sync_log without its key's index, with codes",
    // A primary key is an ART index: building it over a run's 300k rows took longer than loading them, and
    // the run's bulk load (src/synclog/duckdb-bulk.ts) keeps one row per person itself. The sink's upserts
    // replace by key without needing the index. A table made by CREATE TABLE AS has the columns and rows,
    // and no constraint. `codes`: a refusal's codes, as the rejects file's `_reject_code`.
    sql: `CREATE TABLE sync_log_v5 AS SELECT * FROM sync_log;
DROP TABLE sync_log;
ALTER TABLE sync_log_v5 RENAME TO sync_log;
ALTER TABLE sync_log ADD COLUMN codes VARCHAR;`,
  },
  {
    version: 6,
    name: "sync_log with each column's compression chosen",
    // DuckDB tries every compression method on every column of each row group it writes, then keeps the
    // best: on a run's 300k-row load, trying dictionary on the digests and FSST on the constants was ~15% of
    // the load's CPU (docs/engineering/performance-log.md). The digests and source rows are unique per
    // person (FSST, which halves hex), the rest repeats (dictionary); the file stays as small.
    sql: `CREATE TABLE sync_log_v6 (
  "run_id" VARCHAR USING COMPRESSION dictionary,
  "person_digest" VARCHAR USING COMPRESSION fsst,
  "job" VARCHAR USING COMPRESSION dictionary,
  "study_id" VARCHAR USING COMPRESSION dictionary,
  "identifier" VARCHAR USING COMPRESSION dictionary,
  "source_rows" JSON USING COMPRESSION fsst,
  "outcome" VARCHAR USING COMPRESSION dictionary,
  "reason" VARCHAR USING COMPRESSION dictionary,
  "import_id" VARCHAR USING COMPRESSION dictionary,
  "verification" VARCHAR USING COMPRESSION dictionary,
  "logged_at" TIMESTAMP USING COMPRESSION rle,
  "checked_at" TIMESTAMP,
  "_raw" JSON,
  "_synced_at" TIMESTAMP USING COMPRESSION rle,
  "_run_id" VARCHAR USING COMPRESSION dictionary,
  "_deleted_at" TIMESTAMP,
  "codes" VARCHAR USING COMPRESSION dictionary
);
INSERT INTO sync_log_v6 SELECT * FROM sync_log;
DROP TABLE sync_log;
ALTER TABLE sync_log_v6 RENAME TO sync_log;`,
  },
];

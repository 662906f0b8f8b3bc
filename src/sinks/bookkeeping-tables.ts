/**
 * The bookkeeping tables the migrations create (duckdb/migrations.ts,
 * postgres/migrations.ts), described for the data dictionary. A test holds
 * these names to the tables the migrations make.
 */
export interface BookkeepingTable {
  name: string;
  description: string;
  primaryKey: readonly string[];
  columns: readonly { name: string; sqlType: string; description: string }[];
}

export const BOOKKEEPING_TABLES: readonly BookkeepingTable[] = [
  {
    name: "sync_runs",
    description:
      "One row per export run and resource: when it ran, how it ended and what it moved. A run killed before it could say so is marked interrupted by the next run of its job.",
    primaryKey: ["run_id", "resource"],
    columns: [
      { name: "run_id", sqlType: "text", description: "The run; `_run_id` of the rows it wrote." },
      {
        name: "resource",
        sqlType: "text",
        description: "The table it exported (participants, email_messages…).",
      },
      {
        name: "started_at",
        sqlType: "timestamp",
        description: "When the run started on this resource (UTC).",
      },
      { name: "finished_at", sqlType: "timestamp", description: "When it ended; NULL while running." },
      { name: "status", sqlType: "text", description: "running, succeeded, failed or interrupted." },
      { name: "pages", sqlType: "bigint", description: "Pages (or batches of single reads) it committed." },
      { name: "rows", sqlType: "bigint", description: "Rows it wrote." },
      { name: "requests", sqlType: "bigint", description: "Requests it made to the service." },
      { name: "error", sqlType: "text", description: "Why it failed, in one line; NULL otherwise." },
      {
        name: "kind",
        sqlType: "text",
        description: "export, import or opt_out (rows from before it existed: export).",
      },
      { name: "job", sqlType: "text", description: "The job definition's name; NULL for an ad hoc export." },
      { name: "file", sqlType: "text", description: "An import's file as the run read it." },
      { name: "file_hash", sqlType: "text", description: "SHA-256 of that file's bytes." },
      {
        name: "counts",
        sqlType: "json",
        description:
          "An import's report counts: imported, rejected, duplicates, unchanged, rowsRead, requests…",
      },
      {
        name: "failure_code",
        sqlType: "text",
        description: "The failure's stable code (docs/errors.md); NULL otherwise.",
      },
    ],
  },
  {
    name: "sync_log",
    description:
      "One row per person per import or opt-out run: what became of them and whether a later participants export found them. People are named by a digest of their identifier, never the email or phone; a row refused while reading, by its row (`row:<n>`). Rows older than `syncLog.retentionDays` are purged. DuckDB does not index the key.",
    primaryKey: ["run_id", "person_digest"],
    columns: [
      { name: "run_id", sqlType: "text", description: "The run (`sync_runs.run_id`)." },
      {
        name: "person_digest",
        sqlType: "text",
        description:
          "SHA-256 of the identifier's kind and value (email in lower case), 32 hex characters; `row:<n>` for a row refused while reading.",
      },
      { name: "job", sqlType: "text", description: "The import or opt-out job." },
      { name: "study_id", sqlType: "text", description: "The study imported into." },
      {
        name: "identifier",
        sqlType: "text",
        description: "email, phone, property:<id>, or personId (opt-out lists).",
      },
      { name: "source_rows", sqlType: "json", description: "The file's row numbers the person came from." },
      {
        name: "outcome",
        sqlType: "text",
        description:
          "imported, unchanged (held back: as last time), rejected (while reading or by the service), opted_out or opted_in (opt-out lists).",
      },
      { name: "reason", sqlType: "text", description: "Why a row or person was rejected." },
      {
        name: "codes",
        sqlType: "text",
        description: "A rejection's codes (docs/errors.md), `;`-joined as the rejects file's `_reject_code`.",
      },
      { name: "import_id", sqlType: "text", description: "The import id of the request that carried them." },
      {
        name: "verification",
        sqlType: "text",
        description:
          "Imported people: unchecked, unverified (their request was counted short), verified or missing after a participants export, resent.",
      },
      { name: "logged_at", sqlType: "timestamp", description: "When the run logged it (UTC)." },
      { name: "checked_at", sqlType: "timestamp", description: "When a read-back check judged it (UTC)." },
      { name: "_raw", sqlType: "json", description: "Unused (NULL)." },
      { name: "_synced_at", sqlType: "timestamp", description: "When the row was written (UTC)." },
      { name: "_run_id", sqlType: "text", description: "The run that last wrote the row." },
      { name: "_deleted_at", sqlType: "timestamp", description: "Unused (NULL)." },
    ],
  },
  {
    name: "sync_state",
    description:
      "Where each stream stands: the cursor of a full refresh under way, the newest email time loaded. Written in the same transaction as the rows, so a killed run resumes exactly where its last commit left. In DuckDB, also how far each history has caught up with its table (`history:participants_history`: the commit time up to which it holds every row).",
    primaryKey: ["stream"],
    columns: [
      { name: "stream", sqlType: "text", description: "The stream, e.g. `participants:study=study_1`." },
      { name: "value", sqlType: "json", description: "Its state (JSON)." },
      { name: "run_id", sqlType: "text", description: "The run that wrote it." },
      { name: "updated_at", sqlType: "timestamp", description: "When (UTC)." },
    ],
  },
  {
    name: "schema_migrations",
    description: "The numbered migrations applied to the bookkeeping tables.",
    primaryKey: ["version"],
    columns: [
      { name: "version", sqlType: "integer", description: "The migration's number." },
      { name: "name", sqlType: "text", description: "Its name." },
      { name: "applied_at", sqlType: "timestamp", description: "When it was applied (UTC)." },
    ],
  },
];

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
    ],
  },
  {
    name: "sync_state",
    description:
      "Where each stream stands: the cursor of a full refresh under way, the newest email time loaded. Written in the same transaction as the rows, so a killed run resumes exactly where its last commit left.",
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

import type { TableSchema } from "../sinks/index.ts";

/**
 * What became of a person in a run: `imported` (the service accepted them),
 * `unchanged` (change-only: held back, the same as the last run sent),
 * `rejected` (refused while reading or by the service; `reason` and `codes`
 * say why), and for an opt-out list `opted_out` / `opted_in` (the service
 * set them so). Rows merged into a person show as more than one number in
 * `source_rows`.
 */
export const SYNC_LOG_OUTCOMES = ["imported", "unchanged", "rejected", "opted_out", "opted_in"] as const;
export type SyncLogOutcome = (typeof SYNC_LOG_OUTCOMES)[number];

/**
 * Whether a person the service accepted is known to be there:
 * `unchecked` until a participants export of the study is matched against
 * them; `unverified` when the request that carried them was answered with a
 * count other than it sent; `verified` / `missing` after the read-back check.
 */
export const SYNC_LOG_VERIFICATION = ["unchecked", "unverified", "verified", "missing", "resent"] as const;
export type SyncLogVerification = (typeof SYNC_LOG_VERIFICATION)[number];

/**
 * `sync_log`: one row per person per run, keyed by (run id, person digest):
 * a resumed run writes each person once. The identifier is kept as
 * personDigest (src/imports/unverified-people.ts), never the email or phone;
 * a row refused while reading is no person and is named `row:<n>`. DuckDB
 * keeps the key without an index (migration 5): building one over a big
 * table cost more than the load itself.
 */
export const SYNC_LOG_TABLE: TableSchema = {
  name: "sync_log",
  columns: [
    { name: "run_id", type: "text" },
    { name: "person_digest", type: "text" },
    { name: "job", type: "text" },
    { name: "study_id", type: "text" },
    { name: "identifier", type: "text" },
    { name: "source_rows", type: "json" },
    { name: "outcome", type: "text" },
    { name: "reason", type: "text" },
    { name: "codes", type: "text" },
    { name: "import_id", type: "text" },
    { name: "verification", type: "text" },
    { name: "logged_at", type: "timestamp" },
    { name: "checked_at", type: "timestamp" },
  ],
  primaryKey: ["run_id", "person_digest"],
};

/** One row of sync_log as the import writes it. */
export type SyncLogRow = {
  run_id: string;
  person_digest: string;
  job: string;
  study_id: string;
  identifier: string;
  source_rows: number[];
  outcome: SyncLogOutcome;
  reason: string | null;
  codes: string | null;
  import_id: string | null;
  verification: SyncLogVerification | null;
  logged_at: Date;
  checked_at: Date | null;
};

import type { TableSchema } from "../sinks/index.ts";

/**
 * What became of a person in an import run: `imported` (the service
 * accepted them), `unchanged` (the same as the last run sent: not sent),
 * `rejected` (the service refused them; `reason` holds its code). Rows merged
 * into a person show as more than one number in `source_rows`.
 */
export const SYNC_LOG_OUTCOMES = ["imported", "unchanged", "rejected"] as const;
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
 * `sync_log`: one row per person per import run, keyed by (run id, person
 * digest) so a resumed run writes each person once. The identifier is kept
 * as personDigest (src/imports/unverified-people.ts), never the email or phone.
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
  import_id: string | null;
  verification: SyncLogVerification | null;
  logged_at: Date;
  checked_at: Date | null;
};

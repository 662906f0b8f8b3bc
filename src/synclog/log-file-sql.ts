/** The columns every row of one run shares. */
export interface RunConstants {
  job: string;
  studyId: string;
  identifier: string;
  at: Date;
}

/** The sync_log columns a run's load writes, in the order of LOG_FILE_SELECT. */
export const LOADED_COLUMNS =
  "run_id, person_digest, job, study_id, identifier, source_rows, outcome, reason, codes, import_id, verification, logged_at, checked_at, _synced_at, _run_id";

/**
 * The SELECT list turning the log file's columns (person-log.ts,
 * LOG_FILE_COLUMNS) into LOADED_COLUMNS. Parameters: $1 run id, $2 job,
 * $3 study, $4 the run's identifier, $5 the time; `json` and `time` are the
 * database's casts.
 */
export function logFileSelect(json: string, time: string): string {
  return `$1, d, $2, $3, coalesce(n, $4), CAST('[' || replace(r, ' ', ',') || ']' AS ${json}), o, x, c, i, v,
  CAST($5 AS ${time}), NULL, CAST($5 AS ${time}), $1`;
}

/** The parameters of logFileSelect. */
export function logFileParams(runId: string, c: RunConstants): string[] {
  return [runId, c.job, c.studyId, c.identifier, c.at.toISOString()];
}

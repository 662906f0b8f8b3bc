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

/** The database's ways of saying what logFileSelect needs. */
export interface LogFileDialect {
  json: string;
  time: string;
  /** SHA-256 of a text expression, as lower-case hex. */
  sha256: (text: string) => string;
  newline: string;
}

export const DUCKDB_LOG_FILE: LogFileDialect = {
  json: "JSON",
  time: "TIMESTAMP",
  sha256: (t) => `sha256(${t})`,
  newline: "chr(10)",
};

export const POSTGRES_LOG_FILE: LogFileDialect = {
  json: "jsonb",
  time: "timestamptz",
  sha256: (t) => `encode(sha256(convert_to(${t}, 'UTF8')), 'hex')`,
  newline: "E'\\n'",
};

/**
 * The SELECT list turning the log file's columns (person-log.ts,
 * LOG_FILE_COLUMNS) into LOADED_COLUMNS, each value digested as
 * personDigest does (src/imports/unverified-people.ts). Parameters: $1 run
 * id, $2 job, $3 study, $4 the run's identifier, $5 the time.
 */
export function logFileSelect(db: LogFileDialect): string {
  const identifier = "coalesce(nullif(n, '#'), $4)";
  const nl = db.newline;
  const digest = `left(${db.sha256(`'recruit-sync person' || ${nl} || ${identifier} || ${nl} || d`)}, 32)`;
  return `$1, CASE WHEN n = '#' THEN d ELSE ${digest} END, $2, $3, ${identifier},
  CAST('[' || replace(r, ' ', ',') || ']' AS ${db.json}), o, x, c, i, v,
  CAST($5 AS ${db.time}), NULL, CAST($5 AS ${db.time}), $1`;
}

/** The parameters of logFileSelect. */
export function logFileParams(runId: string, c: RunConstants): string[] {
  return [runId, c.job, c.studyId, c.identifier, c.at.toISOString()];
}

import type { LogPart } from "./person-log.ts";

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
 * The person_digest of a line, as personDigest makes it
 * (src/imports/unverified-people.ts): `identifier`, the parameter holding
 * the run's identifier.
 */
export function logFileDigest(db: LogFileDialect, identifier: string): string {
  const id = `coalesce(nullif(n, '#'), ${identifier})`;
  const nl = db.newline;
  return `CASE WHEN n = '#' THEN d ELSE left(${db.sha256(`'recruit-sync person' || ${nl} || ${id} || ${nl} || d`)}, 32) END`;
}

/**
 * The SELECT list turning the log file's columns (person-log.ts,
 * LOG_FILE_COLUMNS) into LOADED_COLUMNS, each value digested as
 * personDigest does. Parameters: $1 run id, $2 job, $3 study, $4 the run's
 * identifier, $5 the time.
 */
export function logFileSelect(db: LogFileDialect): string {
  return `$1, ${logFileDigest(db, "$4")}, $2, $3, coalesce(nullif(n, '#'), $4),
  CAST('[' || replace(r, ' ', ',') || ']' AS ${db.json}), o, x, c, i, v,
  CAST($5 AS ${db.time}), NULL, CAST($5 AS ${db.time}), $1`;
}

/** The parameters of logFileSelect. */
export function logFileParams(runId: string, c: RunConstants): string[] {
  return [runId, c.job, c.studyId, c.identifier, c.at.toISOString()];
}

/** Parts of one run's log, loaded together in one transaction. */
export interface PartsLoad {
  runId: string;
  /** In the order they were written; a part without lines is skipped. */
  parts: readonly LogPart[];
  constants: RunConstants;
  /**
   * The run's rows already in sync_log are deleted first: the run's first
   * load (a resume under the same id writes every person again).
   */
  clear: boolean;
  /**
   * A person may have several lines, here or in an earlier load of the
   * run: only the latest is kept, and a row of an earlier load is replaced.
   */
  mayRepeat: boolean;
}

/**
 * The import pipeline's public surface: CSV / CRM exports in, participant
 * import requests out, every row accounted for. See docs/imports.md.
 */
export { type ColumnPlan, normalizeHeader, planColumns } from "./column-plan.ts";
export { CountMismatch } from "./count-mismatch.ts";
export { type DetectedEncoding, detectEncoding, type Encoding } from "./decode.ts";
export { dedupeKey, KeyIndex, mergePersons } from "./dedupe.ts";
export { type Delimiter, detectDelimiter } from "./detect-delimiter.ts";
export { hashFile, hashValue } from "./file-hash.ts";
export { type FirstRecords, readFirstRecords } from "./first-records.ts";
export { forgetSentState, forgetUnverifiedMarks } from "./forget-marks.ts";
export { looksLikeDataRow } from "./header-echo.ts";
export {
  IMPORT_ERROR_CODES,
  type ImportErrorCode,
  ImportFileError,
  ImportRefusedError,
} from "./import-error.ts";
export {
  type BatchNumbering,
  createRedisLedger,
  type ImportLedger,
  type LedgerBatch,
  type LedgerRun,
} from "./ledger.ts";
export { createRowMapper, identifierKey, type MappedRow } from "./map-row.ts";
export { type RunOptOutOptions, runOptOut } from "./opt-out.ts";
export { PRESETS, type Preset, type PresetRule } from "./presets/index.ts";
export { type CsvRecord, type CsvSource, openCsv, type RecordChunk } from "./read-records.ts";
export { REJECT_COLUMNS } from "./rejects-writer.ts";
export { formatSummary, ImportProgress, ImportReport, OptOutReport } from "./report.ts";
export {
  DroppedValue,
  ROW_PROBLEM_CODES,
  RowProblem,
  RowProblemCode,
} from "./row-problem.ts";
export {
  type BatchProgress,
  type ChangeOnlyOptions,
  type RunImportOptions,
  runImport,
} from "./run-import.ts";
export { StampLog } from "./sent-stamps.ts";
export {
  type ChangeState,
  hash64,
  layoutBits,
  mappingFingerprint,
  openSentState,
  SENT_STATE_FORMAT,
  SENT_STATE_TTL_SECONDS,
  sentStateScope,
  tokenFingerprint,
} from "./sent-state.ts";
export { type SubmitOutcome, submitBatch } from "./submit-batch.ts";
export * from "./transforms/index.ts";
export {
  clearUnverified,
  markUnverified,
  personDigest,
  readUnverified,
  UNVERIFIED_TTL_SECONDS,
  unverifiedKeys,
  unverifiedStudiesKey,
} from "./unverified-people.ts";

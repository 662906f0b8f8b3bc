/**
 * The import pipeline's public surface: CSV / CRM exports in, participant
 * import requests out, every row accounted for. See docs/imports.md.
 */
export { CountMismatch } from "./count-mismatch.ts";
export { type DetectedEncoding, detectEncoding, type Encoding } from "./decode.ts";
export { KeyIndex } from "./dedupe.ts";
export { type Delimiter, detectDelimiter } from "./detect-delimiter.ts";
export { hashFile, hashValue } from "./file-hash.ts";
export { type FirstRecords, readFirstRecords } from "./first-records.ts";
export { forgetSentState, forgetUnverifiedMarks } from "./forget-marks.ts";
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
export { type RunOptOutOptions, runOptOut } from "./opt-out.ts";
export { type CsvSource, openCsv } from "./read-records.ts";
export type { RecordChunk } from "./record-chunk.ts";
export { REJECT_COLUMNS } from "./rejects-writer.ts";
export { formatSummary, ImportProgress, ImportReport, OptOutReport } from "./report.ts";
export {
  DroppedValue,
  ROW_PROBLEM_CODES,
  RowProblem,
  RowProblemCode,
} from "./row-problem.ts";
export {
  type ColumnPlan,
  createRowMapper,
  dedupeKey,
  identifierKey,
  looksLikeDataRow,
  type MappedRow,
  mergePersons,
  normalizeHeader,
  PRESETS,
  type Preset,
  type PresetRule,
  planColumns,
} from "./rules/index.ts";
export * from "./rules/transforms/index.ts";
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
export {
  clearUnverified,
  markUnverified,
  personDigest,
  readUnverified,
  UNVERIFIED_TTL_SECONDS,
  unverifiedKeys,
  unverifiedStudiesKey,
} from "./unverified-people.ts";

export { CATCH_UP_ROWS, HistoryCatchUp, type HistoryDb } from "./history-catch-up.ts";
export { closeGoneHistory, mergeHistory, prepareHistory, type RunSql } from "./history-hooks.ts";
export { HISTORY_COLUMNS, type HistorySpec, type HistoryView, historyTable } from "./history-spec.ts";
export { DUCKDB_HISTORY, type HistoryDialect, POSTGRES_HISTORY } from "./history-sql.ts";

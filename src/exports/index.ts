export { BudgetWaits, COMMIT_DURING_WAITS_OF_MS } from "./budget-waits.ts";
export { readIncentiveIdsFile } from "./incentive-ids.ts";
export { type RunExportOptions, runExport } from "./run-export.ts";
export { ExportProgress, formatRunReport, ResourceReport, RunReport } from "./run-report.ts";
export {
  type CheckpointInfo,
  DEFAULT_CHECKPOINT_ROWS,
  type ResourceCounters,
  type StreamContext,
} from "./stream-context.ts";
export { daysCovering, emailStreamKey, sentWithinFilter } from "./streams/email-messages.ts";
export { EXPORT_TABLES, exportTableSchemas } from "./tables.ts";
export { type DerivedTable, deriveTable, snakeCase } from "./zod-columns.ts";

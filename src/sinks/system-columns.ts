import type { ColumnSchema, TableSchema } from "./types.ts";

/** Columns every exported table carries besides its data. */
export const SYSTEM_COLUMNS: readonly ColumnSchema[] = [
  {
    name: "_raw",
    type: "json",
    description: "The record as the service sent it, fields beyond the spec included.",
  },
  { name: "_synced_at", type: "timestamp", description: "When the export last wrote the row (UTC)." },
  {
    name: "_run_id",
    type: "text",
    description: "The export run that last wrote the row (sync_runs.run_id).",
  },
  {
    name: "_deleted_at",
    type: "timestamp",
    description:
      "When an export found the record gone from the service (UTC); NULL while it is there. Rows are never removed.",
  },
];

/** Data columns followed by the system columns, in the order sinks stage them. */
export function allColumns(table: TableSchema): ColumnSchema[] {
  const own = new Set(table.columns.map((c) => c.name));
  return [...table.columns, ...SYSTEM_COLUMNS.filter((c) => !own.has(c.name))];
}

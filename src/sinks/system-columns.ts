import type { ColumnSchema, TableSchema } from "./types.ts";

/** Columns every exported table carries besides its data. */
export const SYSTEM_COLUMNS: readonly ColumnSchema[] = [
  { name: "_raw", type: "json" },
  { name: "_synced_at", type: "timestamp" },
  { name: "_run_id", type: "text" },
  { name: "_deleted_at", type: "timestamp" },
];

/** Data columns followed by the system columns, in the order sinks stage them. */
export function allColumns(table: TableSchema): ColumnSchema[] {
  const own = new Set(table.columns.map((c) => c.name));
  return [...table.columns, ...SYSTEM_COLUMNS.filter((c) => !own.has(c.name))];
}

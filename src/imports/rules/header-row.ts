import type { ImportJobDefinition } from "../../config/import-job.ts";
import { type ColumnPlan, planColumns } from "./column-plan.ts";
import { planRow, type RowPlan } from "./row-plan.ts";

/**
 * The header row: after `source.skipRows` rows and any blank ones, the first
 * row names the columns, or, in a file without a header row, is the first
 * person and the columns are `column1`, `column2`, …. Imports and opt-out
 * lists read it alike; an import plans every row's mapping from it.
 */

/** A row of nothing but empty or blank cells: counted, never mapped. */
export function isBlank(cells: readonly string[]): boolean {
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i] as string;
    // Most cells start with a visible character: no need to trim them.
    if (c.length > 0 && (c.charCodeAt(0) > 32 || c.trim() !== "")) return false;
  }
  return true;
}

/** The column headers a header row (or, without one, the first row) gives. */
export function headersOf(def: { source: { header: boolean } }, cells: readonly string[]): string[] {
  return def.source.header ? [...cells] : cells.map((_c, k) => `column${k + 1}`);
}

/** The plans of a file's header row (or first row): its columns, then the row steps. Throws what the plan refuses. */
export function planHeader(
  def: ImportJobDefinition,
  cells: readonly string[],
): { columns: ColumnPlan; plan: RowPlan } {
  const columns = planColumns(headersOf(def, cells), def);
  return { columns, plan: planRow(columns, def) };
}

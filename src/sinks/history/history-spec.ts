import { SinkError } from "../../errors/index.ts";
import type { ColumnSchema, TableSchema } from "../types.ts";

export type { HistorySpec, HistoryView } from "../types.ts";

/** The columns every history table adds to its key and tracked columns. */
export const HISTORY_COLUMNS: readonly ColumnSchema[] = [
  {
    name: "row_hash",
    type: "text",
    description:
      "A hash of the tracked columns of this version (DuckDB and files: MD5 of their JSON; PostgreSQL: `hash_record_extended` of their row); a new version is opened only when it differs from the current one's.",
  },
  {
    name: "valid_from",
    type: "timestamp",
    description: "When the export that first saw this state committed it (UTC).",
  },
  {
    name: "valid_to",
    type: "timestamp",
    description:
      "When the export that saw the next state, or saw the entity gone from the service, committed (UTC); NULL while current.",
  },
  {
    name: "is_current",
    type: "boolean",
    description: "True for the one version that holds now; false once closed.",
  },
  {
    name: "opened_by_run",
    type: "text",
    description: "The export run that opened this version (sync_runs.run_id).",
  },
  {
    name: "closed_by_run",
    type: "text",
    description: "The export run that closed it (sync_runs.run_id); NULL while current.",
  },
];

/** The history table of `table`: its key, its tracked columns (typed as in `table`), then HISTORY_COLUMNS. */
export function historyTable(table: TableSchema): TableSchema & { history?: undefined } {
  const spec = table.history;
  if (!spec) throw new SinkError(`table ${table.name} keeps no history`, { retryable: false });
  if (table.primaryKey.length !== 1 || table.primaryKey[0] !== spec.key) {
    throw new SinkError(`${spec.table}: the key must be ${table.name}'s one primary-key column`, {
      retryable: false,
    });
  }
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  const own = [spec.key, ...spec.tracked].map((name) => {
    const c = byName.get(name);
    if (!c)
      throw new SinkError(`${spec.table}: ${name} is not a column of ${table.name}`, { retryable: false });
    return c;
  });
  return { name: spec.table, columns: [...own, ...HISTORY_COLUMNS], primaryKey: [spec.key, "valid_from"] };
}

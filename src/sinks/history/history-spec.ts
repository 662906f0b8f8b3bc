import { SinkError } from "../../errors/index.ts";
import type { ColumnSchema, TableSchema } from "../types.ts";

/** A view kept beside a history table; `sql` is its SELECT, valid in DuckDB and PostgreSQL alike. */
export interface HistoryView {
  name: string;
  description: string;
  sql: string;
  /** Its columns and what they mean, for the data dictionary (a test holds them to the database's). */
  columns: readonly { name: string; description: string }[];
}

/**
 * Versions of an exported table's rows (slowly changing dimension, type 2):
 * a row of the history table is one state of one entity and the time span
 * it held. A version is opened only when one of `tracked` changed; a version
 * is closed when its entity changes again or is gone from the service.
 */
export interface HistorySpec {
  /** The history table, e.g. `participants_history`. */
  table: string;
  /** The entity's own identity: the exported table's one primary-key column, never a compound. */
  key: string;
  /** Columns of the exported table whose change opens a version, in a fixed order (it feeds the hash). */
  tracked: readonly string[];
  /** The as-of query: a DuckDB table macro, a PostgreSQL function returning rows of the history table. */
  asOf: string;
  /** Views over the history table, created with it. */
  views?: readonly HistoryView[];
}

/** The columns every history table adds to its key and tracked columns. */
export const HISTORY_COLUMNS: readonly ColumnSchema[] = [
  {
    name: "row_hash",
    type: "text",
    description:
      "MD5 of the tracked columns of this version; a new version is opened only when it differs from the current one's.",
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

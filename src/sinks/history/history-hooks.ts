import { addColumnSql } from "../ddl.ts";
import type { TableSchema } from "../types.ts";
import { catchUpCompareTableSql } from "./catch-up-sql.ts";
import { historyTable } from "./history-spec.ts";
import {
  compareTableSql,
  type HistoryDialect,
  historyCloseGoneSql,
  historyCompareSql,
  historyDdl,
  POSTGRES_HISTORY_LOCK,
  rehashHistorySql,
} from "./history-sql.ts";

/** How a sink runs one statement inside its open transaction. */
export type RunSql = (sql: string, params?: readonly (string | null)[]) => Promise<unknown>;
/** How a sink reads one number (`n`) back, inside its open transaction. */
export type CountSql = (sql: string) => Promise<number>;

/**
 * Creates `table`'s history table (or adds the columns it lacks), its as-of
 * query and its views. Returns the history table's schema, or undefined when
 * `table` keeps no history.
 */
export async function prepareHistory(
  table: TableSchema,
  d: HistoryDialect,
  run: RunSql,
  columnsOf: (table: string) => Promise<ReadonlySet<string>>,
): Promise<TableSchema | undefined> {
  if (!table.history) return undefined;
  const h = historyTable(table);
  const [create, ...rest] = historyDdl(table, d);
  if (create) await run(create);
  const existing = await columnsOf(h.name);
  for (const col of h.columns) if (!existing.has(col.name)) await run(addColumnSql(h.name, col, d.types));
  for (const sql of rest) await run(sql);
  const rehash = d.kind === "postgres" ? rehashHistorySql(table, d) : undefined;
  if (rehash) await run(rehash);
  // PostgreSQL makes its scratch table per connection, at commit (compareTableSql).
  const compare = d.kind === "duckdb" ? catchUpCompareTableSql(table) : undefined;
  if (compare) await run(compare);
  return h;
}

/**
 * PostgreSQL: after a batch of `table` was merged from `stage`, its versions,
 * in the commit's transaction. (DuckDB: HistoryCatchUp.)
 */
export async function mergeHistory(
  table: TableSchema,
  stage: string,
  d: HistoryDialect,
  run: RunSql,
  now: Date,
  runId: string,
  count: CountSql,
): Promise<void> {
  if (!table.history) return;
  const params = [now.toISOString(), runId];
  const compare = historyCompareSql(table, stage, d);
  if (!compare) return;
  await run(POSTGRES_HISTORY_LOCK, [table.history.table]);
  await run(compareTableSql(table) as string);
  await run(compare.open, params);
  if ((await count(compare.changed)) === 0) return;
  await run(compare.close, params);
  await run(compare.reopen, params);
  await run(compare.clear);
}

/** After a full refresh's soft delete: closes the versions of what it found gone, in the same transaction. */
export async function closeGoneHistory(
  table: TableSchema,
  d: HistoryDialect,
  run: RunSql,
  now: Date,
  runId: string,
): Promise<void> {
  const sql = historyCloseGoneSql(table, d);
  if (!sql || !table.history) return;
  if (d.kind === "postgres") await run(POSTGRES_HISTORY_LOCK, [table.history.table]);
  await run(sql, [now.toISOString(), runId]);
}

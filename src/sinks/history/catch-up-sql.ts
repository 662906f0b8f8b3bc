import { quoteIdent } from "../identifiers.ts";
import type { TableSchema } from "../types.ts";
import { type HistoryDialect, hashExpr } from "./history-sql.ts";

/** The sync_state stream holding how far `table`'s history has caught up (see catchUpSql). */
export function catchUpStream(table: TableSchema): string {
  return `history:${table.history?.table ?? table.name}`;
}

/**
 * DuckDB: the history catches up with the exported table every few commits
 * instead of at each one (history-catch-up.ts). The rows it has yet to see
 * are those of the table written after its mark: `_synced_at` is the time
 * of the commit that wrote the row and `_run_id` its run, exactly the
 * `valid_from` and `opened_by_run` of the version the row opens. The table
 * keeps one row per key, so the sink catches up before a commit overwrites
 * a row the history has not seen.
 *
 * `fill` notes the current hash of every key written since the mark
 * (the history streams past a hash table of those keys: DuckDB has no index
 * on it, and one read of the history per catch-up is what makes it cheaper
 * than per commit). `close` is needed only when `changed` counts a changed
 * hash. Parameter of every statement: $1 the mark.
 */
export function catchUpSql(
  table: TableSchema,
  d: HistoryDialect,
):
  | { fill: string; changed: string; close: string; open: string; clear: string; pending: string }
  | undefined {
  const spec = table.history;
  if (!spec) return undefined;
  const name = quoteIdent(spec.table);
  const key = quoteIdent(spec.key);
  const compare = `${d.tempSchema}.${quoteIdent(`_compare_${spec.table}`)}`;
  const own = [spec.key, ...spec.tracked].map(quoteIdent);
  const since = `"_synced_at" > $1${d.timestampCast}`;
  const unseen = `(SELECT ${own.join(", ")}, ${hashExpr(table, d, quoteIdent(table.name))} AS "row_hash", "_synced_at", "_run_id"
  FROM ${quoteIdent(table.name)} WHERE ${since}) AS s`;
  const changedRows = `${unseen} JOIN ${compare} AS x ON x.key = s.${key} WHERE x.current_hash <> s."row_hash"`;
  return {
    // `last` as UTC ISO text to the microsecond: the mark must not fall short of the newest row.
    pending: `SELECT count(*) AS n, strftime(max("_synced_at"), '%Y-%m-%dT%H:%M:%S.%fZ') AS last
FROM ${quoteIdent(table.name)} WHERE ${since}`,
    fill: `INSERT INTO ${compare} SELECT c.${key}, c."row_hash"
FROM ${name} AS c JOIN ${quoteIdent(table.name)} AS s ON c.${key} = s.${key} WHERE c."is_current" AND s.${since}`,
    changed: `SELECT count(*) AS n FROM ${changedRows}`,
    close: `UPDATE ${name} SET "valid_to" = ch."_synced_at", "is_current" = false, "closed_by_run" = ch."_run_id"
FROM (SELECT s.${key} AS key, s."_synced_at", s."_run_id" FROM ${changedRows}) AS ch
WHERE ${name}.${key} = ch.key AND ${name}."is_current"`,
    open: `INSERT INTO ${name} (${[...own, '"row_hash"', '"valid_from"', '"is_current"', '"opened_by_run"'].join(", ")})
SELECT ${own.map((c) => `s.${c}`).join(", ")}, s."row_hash", s."_synced_at", true, s."_run_id"
FROM ${unseen} LEFT JOIN ${compare} AS x ON x.key = s.${key}
WHERE x.current_hash IS NULL OR x.current_hash <> s."row_hash"`,
    clear: `DELETE FROM ${compare}`,
  };
}

/** The scratch table of catchUpSql, made in prepare: each key's current hash. */
export function catchUpCompareTableSql(table: TableSchema): string | undefined {
  const spec = table.history;
  if (!spec) return undefined;
  return `CREATE OR REPLACE TEMP TABLE ${quoteIdent(`_compare_${spec.table}`)} (key VARCHAR, current_hash VARCHAR)`;
}

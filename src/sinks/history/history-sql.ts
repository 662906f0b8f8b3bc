import type { SqlTypeMap } from "../ddl.ts";
import { quoteIdent } from "../identifiers.ts";
import type { ColumnSchema, TableSchema } from "../types.ts";
import { historyTable } from "./history-spec.ts";

/** What differs between the databases in the history statements. */
export interface HistoryDialect {
  kind: "duckdb" | "postgres";
  types: SqlTypeMap;
  /** Cast of a bound timestamp parameter, e.g. `::TIMESTAMP`. */
  timestampCast: string;
  /**
   * A column's value as the version hash takes it: the same for the same
   * value in every session of this database.
   */
  hashText(column: ColumnSchema, ref: string): string;
  /** The hash of those values, as text. */
  hashOf(texts: readonly string[]): string;
  /** Where the connection's temporary tables are, e.g. `pg_temp`. */
  tempSchema: string;
}

export const DUCKDB_HISTORY: Omit<HistoryDialect, "types"> = {
  kind: "duckdb",
  timestampCast: "::TIMESTAMP",
  // TIMESTAMP holds UTC wall time and casts to text without a time zone.
  hashText: (_c, ref) => `CAST(${ref} AS VARCHAR)`,
  hashOf: (texts) => `md5(CAST(to_json([${texts.join(", ")}]) AS VARCHAR))`,
  tempSchema: "temp.main",
};

export const POSTGRES_HISTORY: Omit<HistoryDialect, "types"> = {
  kind: "postgres",
  timestampCast: "::timestamptz",
  // The values themselves: hash_record_extended hashes each by its type's own hash
  // (a timestamptz by its instant, jsonb normalised), whatever the session's settings.
  hashText: (_c, ref) => ref,
  // A 64-bit hash of the row with no text form made: ~0.2 s of 800,000 rows where
  // md5(ROW(…)::text) took 1.4 s (performance-log.md). POSTGRES_HASH_KIND names it.
  hashOf: (texts) => `hash_record_extended(ROW(${texts.join(", ")}), 0)::text`,
  tempSchema: "pg_temp",
};

/** CREATE TABLE, indexes, the as-of query and the views of `table`'s history. */
export function historyDdl(table: TableSchema, d: HistoryDialect): string[] {
  const h = historyTable(table);
  const spec = table.history;
  if (!spec) return [];
  const name = quoteIdent(h.name);
  const key = quoteIdent(spec.key);
  const cols = h.columns.map((c) => {
    const notNull = ["valid_from", "is_current", "row_hash", spec.key].includes(c.name) ? " NOT NULL" : "";
    return `${quoteIdent(c.name)} ${d.types[c.type]}${notNull}`;
  });
  // No enforced key (DuckDB would keep an ART index in memory; PostgreSQL pays ~1 s of an
  // 800,000-version load per index): a version opens only where its entity has no current
  // one, at a commit's time, later than every version before. PostgreSQL's one index is
  // the partial unique one the merge probes: an entity has one current version at most.
  const out = [`CREATE TABLE IF NOT EXISTS ${name} (\n  ${cols.join(",\n  ")}\n)`];
  if (d.kind === "postgres") {
    out.push(
      `CREATE UNIQUE INDEX IF NOT EXISTS ${quoteIdent(`${h.name}_current`)} ON ${name} (${key}) WHERE "is_current"`,
    );
  }
  const asOfBody = `SELECT * FROM ${name} WHERE "valid_from" <= as_of AND ("valid_to" IS NULL OR "valid_to" > as_of)`;
  out.push(
    d.kind === "duckdb"
      ? `CREATE OR REPLACE MACRO ${quoteIdent(spec.asOf)}(as_of) AS TABLE ${asOfBody}`
      : `CREATE OR REPLACE FUNCTION ${quoteIdent(spec.asOf)}(as_of timestamptz) RETURNS SETOF ${name}
LANGUAGE sql STABLE AS $fn$ ${asOfBody} $fn$`,
  );
  for (const v of spec.views ?? []) out.push(`CREATE OR REPLACE VIEW ${quoteIdent(v.name)} AS ${v.sql}`);
  return out;
}

/** The version hash of `table`'s tracked columns of the row `alias`. */
export function hashExpr(table: TableSchema, d: HistoryDialect, alias: string): string {
  const spec = table.history;
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  const texts = (spec?.tracked ?? []).map((n) =>
    d.hashText(byName.get(n) as ColumnSchema, `${alias}.${quoteIdent(n)}`),
  );
  return d.hashOf(texts);
}

/** How PostgreSQL's versions are hashed now (POSTGRES_HISTORY.hashOf); noted in sync_state. */
export const POSTGRES_HASH_KIND = "hash_record_extended";

/**
 * PostgreSQL: rehashes every version of `table`'s history the current way,
 * once: a version hashed another way (md5 of the row's text before 29 Nov
 * 2026) would differ from its entity's next state however unchanged, and
 * every entity would get a new version. The statement notes the way in
 * sync_state (`history-hash:<history table>`) and updates only when the
 * note was missing or other, so a warehouse already rehashed is not read.
 */
export function rehashHistorySql(table: TableSchema, d: HistoryDialect): string | undefined {
  const spec = table.history;
  if (!spec) return undefined;
  const stream = `history-hash:${spec.table}`.replaceAll("'", "''");
  const name = quoteIdent(spec.table);
  return `WITH noted AS (
  INSERT INTO sync_state (stream, value, updated_at)
  VALUES ('${stream}', '{"hash":"${POSTGRES_HASH_KIND}"}'::jsonb, now())
  ON CONFLICT (stream) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
  WHERE sync_state.value IS DISTINCT FROM EXCLUDED.value
  RETURNING 1
)
UPDATE ${name} AS h SET "row_hash" = ${hashExpr(table, d, "h")} WHERE EXISTS (SELECT 1 FROM noted)`;
}

/**
 * PostgreSQL's scratch table of historyCompareSql. Its temporary tables
 * belong to one pooled connection, so a commit makes it when it first needs
 * it on that connection (emptied at commit).
 */
export function compareTableSql(table: TableSchema): string | undefined {
  const spec = table.history;
  if (!spec) return undefined;
  return `CREATE TEMP TABLE IF NOT EXISTS ${quoteIdent(`_compare_${spec.table}`)} (key text, row_hash text) ON COMMIT DELETE ROWS`;
}

/**
 * PostgreSQL: the statements that follow the merge of a staged batch, in the
 * same transaction. An entity staged with the state it already has gets
 * nothing: a re-run adds no row. (DuckDB's history catches up every few
 * commits instead: catch-up-sql.ts.)
 *
 * `open` reads the stage once: it hashes each row, finds its entity's current
 * hash by an index probe, and opens a version for every entity without a
 * current one (new, or back after being gone); the entities whose hash
 * changed it notes in the scratch table. Only when `changed` counts some
 * (rare once loaded) do `close` and `reopen` end their current versions and
 * open the new ones: the one-current-version index forbids opening first.
 * Parameters of open, close and reopen: $1 the commit's time, $2 its run id.
 * `stage` holds one row per key.
 */
export function historyCompareSql(
  table: TableSchema,
  stage: string,
  d: HistoryDialect,
): { open: string; changed: string; close: string; reopen: string; clear: string } | undefined {
  const spec = table.history;
  if (!spec) return undefined;
  const name = quoteIdent(spec.table);
  const key = quoteIdent(spec.key);
  const compare = `${d.tempSchema}.${quoteIdent(`_compare_${spec.table}`)}`;
  const time = `$1${d.timestampCast}`;
  const own = [spec.key, ...spec.tracked].map(quoteIdent);
  const versionColumns = [...own, '"row_hash"', '"valid_from"', '"is_current"', '"opened_by_run"'].join(", ");
  return {
    // A correlated subquery: PostgreSQL probes the current-version index once per staged key.
    // As a join, with the statistics of a table growing during a load, it chose to hash the whole history.
    open: `WITH x AS MATERIALIZED (
  SELECT ${own.map((c) => `s.${c}`).join(", ")}, ${hashExpr(table, d, "s")} AS row_hash,
    (SELECT c."row_hash" FROM ${name} AS c WHERE c.${key} = s.${key} AND c."is_current") AS current_hash
  FROM ${stage} AS s
), changed AS (
  INSERT INTO ${compare} (key, row_hash) SELECT x.${key}, x.row_hash FROM x WHERE x.current_hash <> x.row_hash
)
INSERT INTO ${name} (${versionColumns})
SELECT ${own.map((c) => `x.${c}`).join(", ")}, x.row_hash, ${time}, true, $2::text FROM x WHERE x.current_hash IS NULL`,
    changed: `SELECT count(*) AS n FROM ${compare}`,
    close: `UPDATE ${name} SET "valid_to" = ${time}, "is_current" = false, "closed_by_run" = $2::text
WHERE "is_current" AND ${key} IN (SELECT x.key FROM ${compare} AS x)`,
    reopen: `INSERT INTO ${name} (${versionColumns})
SELECT ${own.map((c) => `s.${c}`).join(", ")}, x.row_hash, ${time}, true, $2::text
FROM ${stage} AS s JOIN ${compare} AS x ON x.key = s.${key}`,
    clear: `DELETE FROM ${compare}`,
  };
}

/**
 * After a full refresh marked rows `_deleted_at`: closes the current version
 * of every entity whose row is marked, at the commit's time. Parameters as
 * historyCompareSql's close.
 */
export function historyCloseGoneSql(table: TableSchema, d: HistoryDialect): string | undefined {
  const spec = table.history;
  if (!spec) return undefined;
  const name = quoteIdent(spec.table);
  const key = quoteIdent(spec.key);
  return `UPDATE ${name} SET "valid_to" = $1${d.timestampCast}, "is_current" = false, "closed_by_run" = $2::text
WHERE "is_current" AND ${key} IN (SELECT ${key} FROM ${quoteIdent(table.name)} WHERE "_deleted_at" IS NOT NULL)`;
}

/**
 * PostgreSQL: history commits of one table wait for each other, across
 * processes, until commit. Two exports of the same stream would otherwise
 * both find no current version of a new entity and both open one. The key
 * names the schema: warehouses in other schemas of the database do not wait.
 */
export const POSTGRES_HISTORY_LOCK =
  "SELECT pg_advisory_xact_lock(hashtext('recruit-sync:history:' || current_schema() || '.' || $1::text))";

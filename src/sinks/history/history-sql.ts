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
   * A column's value as text that is the same for the same value in every
   * session of this database: it feeds the version hash.
   */
  hashText(column: ColumnSchema, ref: string): string;
  /** The hash of an array of text expressions. */
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
  // timestamptz as text follows the session's TimeZone and DateStyle; the epoch does not.
  // Every other tracked type prints the same in every session (jsonb normalised).
  hashText: (c, ref) => (c.type === "timestamp" ? `extract(epoch FROM ${ref})` : ref),
  // A row's text form quotes what needs it and leaves NULL empty ("" is an empty string):
  // unambiguous, and cheaper than building a jsonb array.
  hashOf: (texts) => `md5(ROW(${texts.join(", ")})::text)`,
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
  // DuckDB keeps an ART index in memory for a key; PostgreSQL enforces the key and,
  // with a partial unique index, that an entity has one current version at most.
  const pk = d.kind === "postgres" ? `,\n  PRIMARY KEY (${key}, "valid_from")` : "";
  const out = [`CREATE TABLE IF NOT EXISTS ${name} (\n  ${cols.join(",\n  ")}${pk}\n)`];
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

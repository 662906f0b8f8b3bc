import { quoteIdent } from "./identifiers.ts";
import { allColumns } from "./system-columns.ts";
import type { ColumnSchema, ColumnType, KeyQuery, TableSchema } from "./types.ts";

export type SqlTypeMap = Readonly<Record<ColumnType, string>>;

/** CREATE TABLE for an exported table: its columns, the system columns and the primary key. */
export function createTableSql(table: TableSchema, types: SqlTypeMap, prefix = ""): string {
  const cols = allColumns(table).map((c) => `${quoteIdent(c.name)} ${types[c.type]}`);
  const pk = table.primaryKey.map(quoteIdent).join(", ");
  return `CREATE TABLE IF NOT EXISTS ${prefix}${quoteIdent(table.name)} (\n  ${cols.join(",\n  ")},\n  PRIMARY KEY (${pk})\n)`;
}

/** The columns a table still lacks: migrating forward only ever adds. */
export function missingColumns(table: TableSchema, existing: ReadonlySet<string>): ColumnSchema[] {
  return allColumns(table).filter((c) => !existing.has(c.name));
}

export function addColumnSql(table: string, column: ColumnSchema, types: SqlTypeMap, prefix = ""): string {
  return `ALTER TABLE ${prefix}${quoteIdent(table)} ADD COLUMN ${quoteIdent(column.name)} ${types[column.type]}`;
}

/**
 * INSERT … SELECT … ON CONFLICT DO UPDATE from a staging table. A row seen
 * again is live again, so `_deleted_at` comes from the staged row (NULL).
 * `select` renders each staged column, e.g. with a cast from text.
 */
export function mergeSql(
  table: TableSchema,
  target: string,
  stage: string,
  select: (c: ColumnSchema) => string = (c) => quoteIdent(c.name),
): string {
  const cols = allColumns(table);
  const pk = new Set(table.primaryKey);
  const updates = cols
    .filter((c) => !pk.has(c.name))
    .map((c) => `${quoteIdent(c.name)} = EXCLUDED.${quoteIdent(c.name)}`);
  return `INSERT INTO ${target} (${cols.map((c) => quoteIdent(c.name)).join(", ")}) SELECT ${cols.map(select).join(", ")} FROM ${stage}
ON CONFLICT (${table.primaryKey.map(quoteIdent).join(", ")}) DO UPDATE SET ${updates.join(", ")}`;
}

/**
 * Merge as delete-then-insert: in DuckDB this is much faster than ON CONFLICT
 * DO UPDATE. Columns a table kept from an older schema are not staged, so a
 * re-loaded row has them NULL: the service no longer sends them.
 */
export function replaceByKeySql(table: TableSchema, target: string, stage: string): [string, string] {
  const cols = allColumns(table).map((c) => quoteIdent(c.name));
  const pk = table.primaryKey.map(quoteIdent);
  const match =
    pk.length === 1
      ? `${pk[0]} IN (SELECT ${pk[0]} FROM ${stage})`
      : `(${pk.join(", ")}) IN (SELECT ${pk.join(", ")} FROM ${stage})`;
  return [
    `DELETE FROM ${target} WHERE ${match}`,
    `INSERT INTO ${target} (${cols.join(", ")}) SELECT ${cols.join(", ")} FROM ${stage}`,
  ];
}

/**
 * UPDATE setting `_deleted_at` on live rows within a scope that no run of the
 * current pass wrote. Parameters: $1 the time, then scope values, then run ids.
 */
export function softDeleteSql(
  target: string,
  scopeColumns: readonly string[],
  keepCount: number,
  placeholder: (n: number) => string,
  timestampCast: string,
): string {
  let n = 1;
  const conds = ['"_deleted_at" IS NULL'];
  const time = `${placeholder(n++)}${timestampCast}`;
  for (const c of scopeColumns) conds.push(`${quoteIdent(c)} = ${placeholder(n++)}`);
  if (keepCount > 0) {
    const keep = Array.from({ length: keepCount }, () => placeholder(n++));
    conds.push(`("_run_id" IS NULL OR "_run_id" NOT IN (${keep.join(", ")}))`);
  }
  return `UPDATE ${target} SET "_deleted_at" = ${time} WHERE ${conds.join(" AND ")}`;
}

/**
 * The soft-delete UPDATE of a commit with its parameters: rows of the scope
 * that the refresh did not see get `_deleted_at`. Both databases number
 * parameters `$n`; only the timestamp cast differs.
 */
export function softDeleteStatement(
  sd: { table: string; scope: Record<string, string>; keepRunIds: readonly string[] },
  now: Date,
  timestampCast: string,
): { sql: string; params: string[] } {
  const scopeCols = Object.keys(sd.scope);
  const sql = softDeleteSql(
    quoteIdent(sd.table),
    scopeCols,
    sd.keepRunIds.length,
    (n) => `$${n}`,
    timestampCast,
  );
  const params = [now.toISOString(), ...scopeCols.map((c) => sd.scope[c] as string), ...sd.keepRunIds];
  return { sql, params };
}

/**
 * SELECT DISTINCT of one column with the optional filters of a KeyQuery, and
 * its parameters: the excluded values, numbered `$n` in both databases.
 */
export function keysStatement(query: KeyQuery): { sql: string; params: string[] } {
  const { column, exclude } = query;
  const params = [...(exclude?.notIn ?? [])];
  const conds = [`${quoteIdent(column)} IS NOT NULL`];
  if (query.liveOnly) conds.push('"_deleted_at" IS NULL');
  if (exclude && params.length > 0) {
    const ph = params.map((_, i) => `$${i + 1}`);
    conds.push(
      `(${quoteIdent(exclude.column)} IS NULL OR ${quoteIdent(exclude.column)} NOT IN (${ph.join(", ")}))`,
    );
  }
  const sql = `SELECT DISTINCT ${quoteIdent(column)} AS key FROM ${quoteIdent(query.table)} WHERE ${conds.join(" AND ")} ORDER BY 1`;
  return { sql, params };
}

/** Every row of a table, ordered by its primary key. */
export function readTableSql(table: TableSchema): string {
  return `SELECT * FROM ${quoteIdent(table.name)} ORDER BY ${table.primaryKey.map(quoteIdent).join(", ")}`;
}

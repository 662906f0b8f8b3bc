import { SinkError } from "../errors/index.ts";
import { allColumns } from "./system-columns.ts";
import type { ColumnSchema, Row, TableSchema } from "./types.ts";

/** JSON.stringify that writes bigints as numbers instead of throwing. */
export function jsonText(value: unknown): string {
  try {
    // A replacer makes stringify several times slower, and bigints are rare: only on a retry.
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v));
  }
}

export function toDate(value: unknown, column: string): Date {
  const d = value instanceof Date ? value : new Date(String(value));
  if (Number.isNaN(d.getTime())) {
    throw new SinkError(`column ${column}: ${JSON.stringify(String(value))} is not a timestamp`, {
      retryable: false,
    });
  }
  return d;
}

/** Days since 1970-01-01 of a YYYY-MM-DD date. */
export function toEpochDays(value: unknown, column: string): number {
  const text = value instanceof Date ? value.toISOString().slice(0, 10) : String(value);
  const ms = Date.parse(`${text.slice(0, 10)}T00:00:00Z`);
  if (Number.isNaN(ms)) {
    throw new SinkError(`column ${column}: ${JSON.stringify(text)} is not a date`, { retryable: false });
  }
  return Math.round(ms / 86_400_000);
}

export function toStringArray(value: unknown, column: string): string[] {
  if (!Array.isArray(value)) {
    throw new SinkError(`column ${column}: expected an array`, { retryable: false });
  }
  return value.map((v) => (typeof v === "string" ? v : jsonText(v)));
}

/**
 * Keeps the last row of each primary key: a merge statement may not touch one
 * row twice, and a later row in a batch is the newer one.
 */
export function lastRowPerKey(table: TableSchema, rows: readonly Row[]): readonly Row[] {
  const pk = table.primaryKey;
  const byKey = new Map<string, Row>();
  for (const row of rows) {
    const key = pk.length === 1 ? String(row[pk[0] as string]) : pk.map((c) => String(row[c])).join("\u0000");
    byKey.delete(key);
    byKey.set(key, row);
  }
  return byKey.size === rows.length ? rows : [...byKey.values()];
}

/** Normalises a value read back from a database into plain JSON-friendly data. */
export function plainValue(column: ColumnSchema | undefined, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return Number(value);
  // node-postgres hands int8 back as text to keep precision.
  if (column?.type === "bigint" && typeof value === "string") return Number(value);
  if (value instanceof Date) {
    return column?.type === "date" ? value.toISOString().slice(0, 10) : value.toISOString();
  }
  if (column?.type === "json" && typeof value === "string") {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  if (column?.type === "date") return String(value).slice(0, 10);
  if (Array.isArray(value)) return value.map((v) => plainValue(undefined, v));
  return value;
}

/** Rows read back from `table`, each value made plain by its column's type. */
export function plainRows(
  table: TableSchema,
  rows: readonly Record<string, unknown>[],
): Record<string, unknown>[] {
  const byName = new Map(allColumns(table).map((c) => [c.name, c]));
  return rows.map((r) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, plainValue(byName.get(k), v)])),
  );
}

export function requireTable(tables: ReadonlyMap<string, TableSchema>, name: string): TableSchema {
  const table = tables.get(name);
  if (!table) {
    throw new SinkError(`table ${name} was not prepared: call prepare() with its schema first`, {
      retryable: false,
    });
  }
  return table;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

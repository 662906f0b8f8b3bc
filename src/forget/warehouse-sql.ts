import { personDigest } from "../imports/index.ts";
import type { ForgetTable } from "./forget-tables.ts";
import type { Who } from "./who.ts";

/** What scrubbing needs of a SQL warehouse: one query with parameters, and the dialect it speaks. */
export interface SqlWarehouse {
  dialect: "duckdb" | "postgres";
  query(sql: string, params: readonly string[]): Promise<Record<string, unknown>[]>;
  /** The columns of a table the warehouse has, or an empty list when it has no such table. */
  columns(table: string): Promise<string[]>;
}

export interface TableRemoval {
  table: string;
  removed: number;
}

/** The person's digests as the unverified marks and a log keyed by digest hold them. */
function digestsOf(who: Who): string[] {
  return [
    ...[...who.emails].map((v) => personDigest("email", v)),
    ...[...who.phones].map((v) => personDigest("phone", v)),
  ];
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A WHERE clause over the columns the table has, with its parameters; undefined when nothing could match. */
function whereClause(
  dialect: SqlWarehouse["dialect"],
  table: ForgetTable,
  present: ReadonlySet<string>,
  who: Who,
  withIds: boolean,
): { where: string; params: string[] } | undefined {
  const params: string[] = [];
  const p = (value: string) => {
    params.push(value);
    return dialect === "postgres" ? `$${params.length}` : "?";
  };
  const list = (values: Iterable<string>) => [...values].map(p).join(", ");
  const emails = [...who.emails];
  const phones = [...who.phones];
  const ids = withIds ? [...who.personIds] : [];
  const participantIds = withIds ? [...who.participantIds] : [];
  const parts: string[] = [];
  const inList = (expr: string, values: string[]) => {
    if (values.length) parts.push(`${expr} IN (${list(values)})`);
  };
  const inArray = (col: string, values: string[], lower: boolean) => {
    if (!values.length) return;
    if (dialect === "postgres") {
      parts.push(
        `EXISTS (SELECT 1 FROM unnest(${col}) AS x(v) WHERE ${lower ? "lower(v)" : "v"} IN (${list(values)}))`,
      );
    } else {
      parts.push(`list_has_any(${lower ? `list_transform(${col}, v -> lower(v))` : col}, [${list(values)}])`);
    }
  };
  for (const [column, holds] of Object.entries(table.columns)) {
    if (!present.has(column)) continue;
    const col = quote(column);
    switch (holds) {
      case "email":
        inList(`lower(${col})`, emails);
        break;
      case "phone":
        inList(col, phones);
        break;
      case "identifier":
        inList(`lower(${col})`, emails);
        inList(col, phones);
        break;
      case "emails":
        inArray(col, emails, true);
        break;
      case "phones":
        inArray(col, phones, false);
        break;
      case "personId":
        inList(col, ids);
        break;
      case "participantId":
        inList(col, participantIds);
        break;
      case "digest":
        inList(col, digestsOf(who));
        break;
      case "json": {
        const text = dialect === "postgres" ? `lower(${col}::text)` : `lower(CAST(${col} AS VARCHAR))`;
        // As a whole JSON string value: quoted, so "ada@x.org" is not found inside "bada@x.org".
        for (const v of [...emails, ...phones, ...ids, ...participantIds])
          parts.push(`strpos(${text}, ${p(`"${v.toLowerCase()}"`)}) > 0`);
        break;
      }
    }
  }
  return parts.length ? { where: parts.map((x) => `(${x})`).join(" OR "), params } : undefined;
}

/**
 * Removes the person from every table of FORGET_TABLES the warehouse has: the
 * rows that name them by email or phone first yield the service's ids of
 * them (person, participant), then every row naming any of those goes.
 * Returns what each table lost; `who` gains the ids found.
 */
export async function scrubSqlWarehouse(
  wh: SqlWarehouse,
  tables: readonly ForgetTable[],
  who: Who,
): Promise<TableRemoval[]> {
  const present = new Map<string, Set<string>>();
  for (const t of tables) {
    const cols = await wh.columns(t.table);
    if (cols.length) present.set(t.table, new Set(cols));
  }
  for (const t of tables) {
    const cols = present.get(t.table);
    if (!cols || !t.yields) continue;
    const clause = whereClause(wh.dialect, t, cols, who, false);
    if (!clause) continue;
    const wanted = [t.yields.personId, t.yields.participantId].filter((c): c is string => !!c && cols.has(c));
    if (!wanted.length) continue;
    const rows = await wh.query(
      `SELECT ${wanted.map(quote).join(", ")} FROM ${quote(t.table)} WHERE ${clause.where}`,
      clause.params,
    );
    for (const r of rows) {
      const person = t.yields.personId ? r[t.yields.personId] : undefined;
      const participant = t.yields.participantId ? r[t.yields.participantId] : undefined;
      if (person !== null && person !== undefined && person !== "") who.personIds.add(String(person));
      if (participant !== null && participant !== undefined && participant !== "")
        who.participantIds.add(String(participant));
    }
  }
  const removals: TableRemoval[] = [];
  for (const t of tables) {
    const cols = present.get(t.table);
    if (!cols) continue;
    const clause = whereClause(wh.dialect, t, cols, who, true);
    if (!clause) continue;
    const [count] = await wh.query(
      `SELECT count(*) AS n FROM ${quote(t.table)} WHERE ${clause.where}`,
      clause.params,
    );
    const n = Number(count?.n ?? 0);
    if (n > 0) await wh.query(`DELETE FROM ${quote(t.table)} WHERE ${clause.where}`, clause.params);
    removals.push({ table: t.table, removed: n });
  }
  return removals;
}

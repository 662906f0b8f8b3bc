import pg from "pg";
import { SinkError } from "../errors/index.ts";
import type { ForgetTable } from "./forget-tables.ts";
import { scrubSqlWarehouse, type TableRemoval } from "./warehouse-sql.ts";
import type { Who } from "./who.ts";

/** Removes the person from a PostgreSQL warehouse (its URL's search_path), in one transaction. */
export async function forgetInPostgres(
  url: string,
  tables: readonly ForgetTable[],
  who: Who,
): Promise<TableRemoval[]> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (err) {
    throw new SinkError(`forget: cannot reach the PostgreSQL warehouse: ${(err as Error).message}`, {
      cause: err,
    });
  }
  try {
    await client.query("BEGIN");
    const removals = await scrubSqlWarehouse(
      {
        dialect: "postgres",
        async query(sql, params) {
          return (await client.query(sql, [...params])).rows as Record<string, unknown>[];
        },
        async columns(table) {
          const res = await client.query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1",
            [table],
          );
          return res.rows.map((r: { column_name: string }) => r.column_name);
        },
      },
      tables,
      who,
    );
    await client.query("COMMIT");
    return removals;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    await client.end().catch(() => {});
  }
}

import { chmod, rename, rm, stat } from "node:fs/promises";
import { DuckDBInstance } from "@duckdb/node-api";
import { SinkError } from "../errors/index.ts";
import { attachWarehouse, sqlString } from "../sinks/duckdb/attach-warehouse.ts";
import type { ForgetTable } from "./forget-tables.ts";
import { scrubSqlWarehouse, type TableRemoval } from "./warehouse-sql.ts";
import type { Who } from "./who.ts";

/**
 * Removes the person from a DuckDB warehouse file, then rewrites the file:
 * DuckDB leaves a deleted row's bytes in the file's free blocks, where a
 * search of the disk would still find them, so the remaining rows are copied
 * into a new file (COPY FROM DATABASE) that replaces the old one. A file
 * another process has open is a WarehouseFileLockedError, and nothing changes.
 */
export async function forgetInDuckDb(
  path: string,
  tables: readonly ForgetTable[],
  who: Who,
): Promise<TableRemoval[]> {
  if (!(await stat(path).catch(() => undefined))) return [];
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  const fresh = `${path}.forget-${process.pid}`;
  let removals: TableRemoval[];
  try {
    await attachWarehouse(
      conn,
      path,
      (err) =>
        new SinkError(`forget: cannot open the DuckDB warehouse at ${path}: ${String(err)}`, { cause: err }),
    );
    removals = await scrubSqlWarehouse(
      {
        dialect: "duckdb",
        async query(sql, params) {
          return (await conn.runAndReadAll(sql, [...params])).getRowObjectsJS();
        },
        async columns(table) {
          const rows = await conn.runAndReadAll(
            "SELECT column_name FROM information_schema.columns WHERE table_catalog = 'wh' AND table_name = ?",
            [table],
          );
          return rows.getRowsJS().map((r) => String(r[0]));
        },
      },
      tables,
      who,
    );
    if (removals.some((r) => r.removed > 0)) {
      await rm(fresh, { force: true });
      await conn.run(`ATTACH ${sqlString(fresh)} AS fresh`);
      await conn.run("COPY FROM DATABASE wh TO fresh");
      await conn.run("USE memory");
      await conn.run("DETACH fresh");
    }
    await conn.run("USE memory");
    await conn.run("DETACH wh");
  } catch (err) {
    await rm(fresh, { force: true });
    throw err;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  if (removals.some((r) => r.removed > 0)) {
    await chmod(fresh, 0o600);
    await rename(fresh, path);
    await rm(`${path}.wal`, { force: true });
    await rm(`${fresh}.wal`, { force: true });
  }
  return removals;
}

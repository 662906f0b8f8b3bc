import { DuckDBInstance } from "@duckdb/node-api";
import pg from "pg";
import { attachWarehouse, closeAttached } from "../sinks/duckdb/attach-warehouse.ts";
import { parseWarehouseUrl } from "../sinks/warehouse-url.ts";

/** The DELETE of sync_log rows logged before $1, if the table exists. */
const PURGE = "DELETE FROM sync_log WHERE logged_at < $1";

/**
 * Deletes the sync_log rows logged before `before` (retention,
 * `syncLog.retentionDays`). Returns how many went; 0 when the warehouse has
 * no sync_log yet. In a file warehouse the parts that hold such rows are
 * rewritten without them (file-purge.ts).
 */
export async function purgeSyncLog(url: string, before: Date): Promise<number> {
  const target = parseWarehouseUrl(url);
  if (target.kind === "postgres") {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const exists = await client.query("SELECT to_regclass('sync_log') AS t");
      if (!exists.rows[0]?.t) return 0;
      return (await client.query(PURGE, [before])).rowCount ?? 0;
    } finally {
      await client.end();
    }
  }
  if (target.kind === "duckdb") {
    const instance = await DuckDBInstance.create(":memory:");
    const conn = await instance.connect();
    try {
      await attachWarehouse(conn, target.path);
      const tables = await conn.runAndReadAll(
        "SELECT 1 FROM information_schema.tables WHERE table_catalog = 'wh' AND table_name = 'sync_log'",
      );
      if (tables.getRowsJS().length === 0) return 0;
      const res = await conn.run("DELETE FROM wh.sync_log WHERE logged_at < $1::TIMESTAMP", [
        before.toISOString(),
      ]);
      return Number(res.rowsChanged);
    } finally {
      await closeAttached(instance, conn);
    }
  }
  const { purgeFileSyncLog } = await import("./file-purge.ts");
  return purgeFileSyncLog(target.dir, before);
}

/** The cut-off of a retention of `days` days. */
export function retentionCutoff(days: number, now: Date = new Date()): Date {
  return new Date(now.getTime() - days * 86_400_000);
}

import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { WarehouseFileLockedError } from "../../errors/index.ts";
import { lockHolder } from "./lock-holder.ts";

/** A string as a DuckDB SQL literal: for file paths, which ATTACH and read_csv take only as literals. */
export const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * Attaches the warehouse file as `wh` and makes it the default. A file that
 * another process has open fails as WarehouseFileLockedError, naming that
 * process; any other failure goes through `otherwise`, which may say what
 * was being done.
 */
export async function attachWarehouse(
  conn: DuckDBConnection,
  path: string,
  otherwise: (err: unknown) => unknown = (err) => err,
): Promise<void> {
  try {
    await conn.run(`ATTACH ${sqlString(path)} AS wh`);
  } catch (err) {
    const holder = lockHolder(err);
    throw holder ? new WarehouseFileLockedError(path, holder, { cause: err }) : otherwise(err);
  }
  await conn.run("USE wh");
}

/**
 * Checkpoints the attached warehouse on DuckDB's thread, then closes. Left
 * to the close, the checkpoint runs on the event loop's thread: a sync log
 * load's close held an import's main thread for up to 144 ms.
 */
export async function closeAttached(instance: DuckDBInstance, conn: DuckDBConnection): Promise<void> {
  try {
    // Fails when the ATTACH did: there is nothing to write then.
    await conn.run("CHECKPOINT wh").catch(() => undefined);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

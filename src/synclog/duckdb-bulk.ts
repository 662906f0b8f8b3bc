import { DuckDBInstance } from "@duckdb/node-api";
import { WarehouseFileLockedError } from "../errors/index.ts";
import { lockHolder } from "../sinks/duckdb/lock-holder.ts";
import { DUCKDB_SQL } from "../sinks/duckdb/sql.ts";
import type { SyncRunRecord } from "../sinks/index.ts";
import { upsertRunParams } from "../sinks/run-record.ts";
import { LOADED_COLUMNS, logFileParams, logFileSelect, type RunConstants } from "./log-file-sql.ts";
import { LOG_FILE_COLUMNS } from "./person-log.ts";

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * Loads a run's log file (person-log.ts) into a DuckDB warehouse's sync_log
 * in one statement (read_csv), the latest line of each person winning, with
 * the run's sync_runs row, in one transaction. The run's earlier rows (a
 * resume under the same run id) are deleted first, so each person is there
 * once. The table exists (sink.prepare made it). Returns the rows loaded.
 */
export async function bulkLoadDuckDb(
  path: string,
  run: SyncRunRecord,
  people: { file: string; lines: number; constants: RunConstants } | undefined,
): Promise<number> {
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    try {
      await conn.run(`ATTACH ${sqlString(path)} AS wh`);
    } catch (err) {
      const holder = lockHolder(err);
      if (holder) throw new WarehouseFileLockedError(path, holder, { cause: err });
      throw err;
    }
    await conn.run("USE wh");
    await conn.run("BEGIN");
    try {
      await conn.run("DELETE FROM sync_log WHERE run_id = $1", [run.runId]);
      let loaded = 0;
      if (people && people.lines > 0) {
        const columns = LOG_FILE_COLUMNS.map((c) => `'${c}': '${c === "s" ? "BIGINT" : "VARCHAR"}'`).join(", ");
        const res = await conn.run(
          `INSERT INTO sync_log (${LOADED_COLUMNS})
SELECT ${logFileSelect("JSON", "TIMESTAMP")}
FROM read_csv(${sqlString(people.file)}, header = false, auto_detect = false, delim = ',', quote = '"',
  escape = '"', columns = {${columns}})
QUALIFY row_number() OVER (PARTITION BY d ORDER BY s DESC) = 1`,
          logFileParams(run.runId, people.constants),
        );
        loaded = Number(res.rowsChanged);
      }
      await conn.run(DUCKDB_SQL.upsertRun, upsertRunParams(run));
      await conn.run("COMMIT");
      return loaded;
    } catch (err) {
      await conn.run("ROLLBACK").catch(() => undefined);
      throw err;
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

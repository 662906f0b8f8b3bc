import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { attachWarehouse, sqlString } from "../sinks/duckdb/attach-warehouse.ts";
import { DUCKDB_SQL } from "../sinks/duckdb/sql.ts";
import type { SyncRunRecord } from "../sinks/index.ts";
import { upsertRunParams } from "../sinks/run-record.ts";
import {
  DUCKDB_LOG_FILE,
  LOADED_COLUMNS,
  logFileParams,
  logFileSelect,
  type RunConstants,
} from "./log-file-sql.ts";
import { LOG_FILE_COLUMNS } from "./person-log.ts";

/**
 * Settings of the loader's own DuckDB. One thread: on a 300k-row run the
 * load took ~0.6 s of CPU and as long on the clock, against ~0.75 s of CPU
 * and 0.65–0.9 s with two, the threads mostly trading locks
 * (docs/engineering/performance-log.md). A memory limit: past it DuckDB
 * writes the rows to the file as the INSERT goes rather than holding them
 * all until the COMMIT; a 1M-row log peaked at 328 MB instead of 473 MB,
 * in the same time. 64 MB ran out of memory at 1M rows; 128 MB held 3M.
 * Its temporary files, should it need any, go beside the warehouse as the
 * sink's do.
 */
function loaderSettings(path: string): Record<string, string> {
  return { threads: "1", memory_limit: "256MB", temp_directory: `${path}.tmp` };
}

/**
 * Loads a run's log file (person-log.ts) into a DuckDB warehouse's sync_log
 * in one INSERT … SELECT from read_csv, with the run's sync_runs row, in one
 * transaction. When a person may have several lines the file is read into a
 * temporary table first, and only the latest line of each person goes in;
 * otherwise the INSERT reads the file itself. The run's earlier rows (a
 * resume under the same run id) are deleted first, so each person is there
 * once. The table exists (sink.prepare made it). Returns the rows loaded.
 */
export async function bulkLoadDuckDb(
  path: string,
  run: SyncRunRecord,
  people: { file: string; lines: number; mayRepeat: boolean; constants: RunConstants } | undefined,
): Promise<number> {
  const instance = await DuckDBInstance.create(":memory:", loaderSettings(path));
  const conn = await instance.connect();
  try {
    await attachWarehouse(conn, path);
    const source = people && people.lines > 0 ? await logFileSource(conn, people) : undefined;
    await conn.run("BEGIN");
    try {
      await conn.run("DELETE FROM sync_log WHERE run_id = $1", [run.runId]);
      let loaded = 0;
      if (people && source) {
        const res = await conn.run(
          `INSERT INTO sync_log (${LOADED_COLUMNS})
SELECT ${logFileSelect(DUCKDB_LOG_FILE)}
FROM ${source}`,
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

/**
 * Where the INSERT reads the log file's lines: read_csv itself, or, when a
 * person may have several lines, a temporary table the file was read into
 * and a filter keeping each person's latest.
 */
async function logFileSource(
  conn: DuckDBConnection,
  people: { file: string; mayRepeat: boolean },
): Promise<string> {
  const columns = LOG_FILE_COLUMNS.map((c) => `'${c}': '${c === "s" ? "BIGINT" : "VARCHAR"}'`).join(", ");
  const read = `read_csv(${sqlString(people.file)},
  header = true, auto_detect = false, delim = ',', quote = '"', escape = '"', columns = {${columns}})`;
  if (!people.mayRepeat) return read;
  await conn.run(`CREATE TEMP TABLE log_file AS SELECT * FROM ${read}`);
  return "temp.log_file WHERE s IN (SELECT max(s) FROM temp.log_file GROUP BY d)";
}

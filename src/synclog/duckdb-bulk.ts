import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { attachWarehouse, closeAttached, sqlString } from "../sinks/duckdb/attach-warehouse.ts";
import { DUCKDB_SQL } from "../sinks/duckdb/sql.ts";
import type { SyncRunRecord } from "../sinks/index.ts";
import { upsertRunParams } from "../sinks/run-record.ts";
import {
  DUCKDB_LOG_FILE,
  LOADED_COLUMNS,
  logFileDigest,
  logFileParams,
  logFileSelect,
  type PartsLoad,
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
 * Loads parts of a run's log (person-log.ts) into a DuckDB warehouse's
 * sync_log in one transaction, with the run's sync_runs row when given (the
 * run's last load). The parts are read by one read_csv; when a person may
 * have several lines they are read into a temporary table first, the run's
 * rows of those people from earlier loads deleted, and only each person's
 * latest line goes in. The table exists (sink.prepare made it). Returns the
 * rows the run gained.
 */
export async function bulkLoadDuckDb(
  path: string,
  run: SyncRunRecord | undefined,
  load: PartsLoad,
): Promise<number> {
  const instance = await DuckDBInstance.create(":memory:", loaderSettings(path));
  const conn = await instance.connect();
  try {
    await attachWarehouse(conn, path);
    const files = load.parts.filter((p) => p.lines > 0).map((p) => p.file);
    await conn.run("BEGIN");
    try {
      if (load.clear) await conn.run("DELETE FROM sync_log WHERE run_id = $1", [load.runId]);
      let loaded = 0;
      if (files.length > 0) {
        const source = await partsSource(conn, files, load);
        const res = await conn.run(
          `INSERT INTO sync_log (${LOADED_COLUMNS})
SELECT ${logFileSelect(DUCKDB_LOG_FILE)}
FROM ${source.from}`,
          logFileParams(load.runId, load.constants),
        );
        loaded = Number(res.rowsChanged) - source.replaced;
      }
      if (run) await conn.run(DUCKDB_SQL.upsertRun, upsertRunParams(run));
      await conn.run("COMMIT");
      return loaded;
    } catch (err) {
      await conn.run("ROLLBACK").catch(() => undefined);
      throw err;
    }
  } finally {
    await closeAttached(instance, conn);
  }
}

/**
 * Where the INSERT reads the parts' lines: read_csv itself, or, when a
 * person may have several lines, a temporary table the parts were read into
 * and a filter keeping each person's latest; the run's rows of those people
 * from earlier loads are deleted then (`replaced` counts them).
 */
async function partsSource(
  conn: DuckDBConnection,
  files: readonly string[],
  load: PartsLoad,
): Promise<{ from: string; replaced: number }> {
  const columns = LOG_FILE_COLUMNS.map((c) => `'${c}': '${c === "s" ? "BIGINT" : "VARCHAR"}'`).join(", ");
  const read = `read_csv([${files.map(sqlString).join(", ")}],
  header = true, auto_detect = false, delim = ',', quote = '"', escape = '"', columns = {${columns}})`;
  if (!load.mayRepeat) return { from: read, replaced: 0 };
  await conn.run(`CREATE TEMP TABLE log_file AS SELECT * FROM ${read}`);
  const replaced = load.clear
    ? 0
    : Number(
        (
          await conn.run(
            `DELETE FROM sync_log WHERE run_id = $1
  AND person_digest IN (SELECT ${logFileDigest(DUCKDB_LOG_FILE, "$2")} FROM temp.log_file)`,
            [load.runId, load.constants.identifier],
          )
        ).rowsChanged,
      );
  return { from: "temp.log_file WHERE s IN (SELECT max(s) FROM temp.log_file GROUP BY d)", replaced };
}

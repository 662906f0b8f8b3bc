import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { SyncRunRecord } from "../sinks/index.ts";
import { POSTGRES_SQL } from "../sinks/postgres/sql.ts";
import { upsertRunParams } from "../sinks/run-record.ts";
import {
  LOADED_COLUMNS,
  logFileParams,
  logFileSelect,
  POSTGRES_LOG_FILE,
  type RunConstants,
} from "./log-file-sql.ts";
import { LOG_FILE_COLUMNS } from "./person-log.ts";

/**
 * Loads a run's log file (person-log.ts) into a PostgreSQL warehouse's
 * sync_log: COPY into a temporary table, then one INSERT … SELECT keeping
 * the latest line of each person, with the run's sync_runs row, in one
 * transaction. The run's earlier rows (a resume under the same run id) are
 * deleted first. The table exists (sink.prepare made it). Returns the rows loaded.
 */
export async function bulkLoadPostgres(
  url: string,
  run: SyncRunRecord,
  people: { file: string; lines: number; constants: RunConstants } | undefined,
): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    try {
      await client.query("DELETE FROM sync_log WHERE run_id = $1", [run.runId]);
      let loaded = 0;
      if (people && people.lines > 0) {
        const columns = LOG_FILE_COLUMNS.map((c) => `${c} ${c === "s" ? "bigint" : "text"}`).join(", ");
        await client.query(`CREATE TEMP TABLE sync_log_file (${columns}) ON COMMIT DROP`);
        const copy = client.query(
          copyFrom(
            `COPY sync_log_file (${LOG_FILE_COLUMNS.join(", ")}) FROM STDIN WITH (FORMAT csv, HEADER true)`,
          ),
        );
        await pipeline(createReadStream(people.file), copy);
        const res = await client.query(
          `INSERT INTO sync_log (${LOADED_COLUMNS})
SELECT DISTINCT ON (d) ${logFileSelect(POSTGRES_LOG_FILE)}
FROM sync_log_file ORDER BY d, s DESC`,
          logFileParams(run.runId, people.constants),
        );
        loaded = res.rowCount ?? 0;
      }
      await client.query(POSTGRES_SQL.upsertRun, upsertRunParams(run));
      await client.query("COMMIT");
      return loaded;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    }
  } finally {
    await client.end();
  }
}

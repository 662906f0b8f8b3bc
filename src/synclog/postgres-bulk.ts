import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { SyncRunRecord } from "../sinks/index.ts";
import { POSTGRES_SQL } from "../sinks/postgres/sql.ts";
import { upsertRunParams } from "../sinks/run-record.ts";
import {
  LOADED_COLUMNS,
  logFileDigest,
  logFileParams,
  logFileSelect,
  type PartsLoad,
  POSTGRES_LOG_FILE,
} from "./log-file-sql.ts";
import { LOG_FILE_COLUMNS } from "./person-log.ts";

/**
 * Loads parts of a run's log (person-log.ts) into a PostgreSQL warehouse's
 * sync_log: COPY into a temporary table, the run's rows of those people
 * from earlier loads deleted when a person may have several lines, then one
 * INSERT … SELECT keeping the latest line of each person, with the run's
 * sync_runs row when given (the run's last load), in one transaction. The
 * table exists (sink.prepare made it). Returns the rows the run gained.
 */
export async function bulkLoadPostgres(
  url: string,
  run: SyncRunRecord | undefined,
  load: PartsLoad,
): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    try {
      if (load.clear) await client.query("DELETE FROM sync_log WHERE run_id = $1", [load.runId]);
      const files = load.parts.filter((p) => p.lines > 0).map((p) => p.file);
      const loaded = files.length > 0 ? await insertParts(client, files, load) : 0;
      if (run) await client.query(POSTGRES_SQL.upsertRun, upsertRunParams(run));
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

/** The parts' lines into sync_log, inside the caller's transaction: the rows the run gained. */
async function insertParts(client: pg.Client, files: readonly string[], load: PartsLoad): Promise<number> {
  const columns = LOG_FILE_COLUMNS.map((c) => `${c} ${c === "s" ? "bigint" : "text"}`).join(", ");
  await client.query(`CREATE TEMP TABLE sync_log_file (${columns}) ON COMMIT DROP`);
  for (const file of files) {
    const copy = client.query(
      copyFrom(
        `COPY sync_log_file (${LOG_FILE_COLUMNS.join(", ")}) FROM STDIN WITH (FORMAT csv, HEADER true)`,
      ),
    );
    await pipeline(createReadStream(file), copy);
  }
  const replaced =
    load.mayRepeat && !load.clear
      ? ((
          await client.query(
            `DELETE FROM sync_log WHERE run_id = $1
  AND person_digest IN (SELECT ${logFileDigest(POSTGRES_LOG_FILE, "$2")} FROM sync_log_file)`,
            [load.runId, load.constants.identifier],
          )
        ).rowCount ?? 0)
      : 0;
  const res = await client.query(
    `INSERT INTO sync_log (${LOADED_COLUMNS})
SELECT DISTINCT ON (d) ${logFileSelect(POSTGRES_LOG_FILE)}
FROM sync_log_file ORDER BY d, s DESC`,
    logFileParams(load.runId, load.constants),
  );
  return (res.rowCount ?? 0) - replaced;
}

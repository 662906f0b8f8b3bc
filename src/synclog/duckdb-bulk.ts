import { rm, writeFile } from "node:fs/promises";
import { DuckDBInstance } from "@duckdb/node-api";
import { WarehouseFileLockedError } from "../errors/index.ts";
import { lockHolder } from "../sinks/duckdb/lock-holder.ts";
import { DUCKDB_SQL } from "../sinks/duckdb/sql.ts";
import type { SyncRunRecord } from "../sinks/index.ts";
import { upsertRunParams } from "../sinks/run-record.ts";
/** The columns every row of one run shares. */
export interface RunConstants {
  job: string;
  studyId: string;
  identifier: string;
  at: Date;
}

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * Loads a run's sync_log rows into a DuckDB warehouse in one statement from
 * a temporary NDJSON file (read_json), with the run's sync_runs row, in one
 * transaction: the sink's staged upsert costs ~35 µs a row, this a few. The
 * run's earlier rows (a resume under the same run id) are deleted first, so
 * each person is there once. The table exists (sink.prepare made it).
 */
export async function bulkLoadDuckDb(
  path: string,
  scratch: string,
  run: SyncRunRecord,
  people: { lines: Iterable<string>; constants: RunConstants } | undefined,
): Promise<number> {
  const lines = people ? [...people.lines] : [];
  await writeFile(scratch, lines.join("\n"), { mode: 0o600 });
  const c = people?.constants;
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
      if (lines.length > 0) {
        await conn.run(
          `INSERT INTO sync_log (run_id, person_digest, job, study_id, identifier, source_rows, outcome, reason,
  import_id, verification, logged_at, checked_at, _synced_at, _run_id)
SELECT $1, d, $2, $3, $4, CAST(r AS JSON), o, x, i, v, $5::TIMESTAMP, NULL, $5::TIMESTAMP, $1
FROM read_json(${sqlString(scratch)}, format = 'newline_delimited',
  columns = {d: 'VARCHAR', r: 'JSON', o: 'VARCHAR', x: 'VARCHAR', i: 'VARCHAR', v: 'VARCHAR'})`,
          [
            run.runId,
            c?.job ?? "",
            c?.studyId ?? "",
            c?.identifier ?? "",
            (c?.at ?? new Date()).toISOString(),
          ],
        );
      }
      await conn.run(DUCKDB_SQL.upsertRun, upsertRunParams(run));
      await conn.run("COMMIT");
    } catch (err) {
      await conn.run("ROLLBACK").catch(() => undefined);
      throw err;
    }
    return lines.length;
  } finally {
    conn.closeSync();
    instance.closeSync();
    await rm(scratch, { force: true });
  }
}

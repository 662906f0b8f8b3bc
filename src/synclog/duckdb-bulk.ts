import { rm, writeFile } from "node:fs/promises";
import { DuckDBInstance } from "@duckdb/node-api";
import { WarehouseFileLockedError } from "../errors/index.ts";
import { lockHolder } from "../sinks/duckdb/lock-holder.ts";
import { DUCKDB_SQL } from "../sinks/duckdb/sql.ts";
import type { SyncRunRecord } from "../sinks/index.ts";
import { runKindParams } from "../sinks/run-record.ts";
import type { SyncLogRow } from "./table.ts";

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
  rows: Iterable<SyncLogRow>,
): Promise<number> {
  const lines: string[] = [];
  for (const r of rows) lines.push(JSON.stringify(r));
  await writeFile(scratch, lines.join("\n"), { mode: 0o600 });
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
SELECT run_id, person_digest, job, study_id, identifier, CAST(source_rows AS JSON), outcome, reason,
  import_id, verification, CAST(logged_at AS TIMESTAMP), CAST(checked_at AS TIMESTAMP), now()::TIMESTAMP, run_id
FROM read_json(${sqlString(scratch)}, format = 'newline_delimited', columns = {
  run_id: 'VARCHAR', person_digest: 'VARCHAR', job: 'VARCHAR', study_id: 'VARCHAR', identifier: 'VARCHAR',
  source_rows: 'JSON', outcome: 'VARCHAR', reason: 'VARCHAR', import_id: 'VARCHAR', verification: 'VARCHAR',
  logged_at: 'VARCHAR', checked_at: 'VARCHAR'})`,
        );
      }
      await conn.run(DUCKDB_SQL.upsertRun, [
        run.runId,
        run.resource,
        run.startedAt.toISOString(),
        run.finishedAt?.toISOString() ?? null,
        run.status,
        run.pages,
        run.rows,
        run.requests,
        run.error,
        ...runKindParams(run),
      ]);
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

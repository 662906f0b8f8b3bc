import { setTimeout as sleep } from "node:timers/promises";
import { WarehouseFileLockedError } from "../errors/index.ts";
import type { Sink, SyncRunRecord } from "../sinks/index.ts";
import { parseWarehouseUrl } from "../sinks/warehouse-url.ts";
import type { RunConstants } from "./duckdb-bulk.ts";
import type { PersonLog } from "./person-log.ts";
import { SYNC_LOG_TABLE, type SyncLogRow } from "./table.ts";

/** Rows per commit: big enough for few round trips, small enough to stage lightly. */
const ROWS_PER_COMMIT = 10_000;

export interface RunLogTarget {
  url: string;
  /** How long to wait for a DuckDB file another process has open; 0 tries once. */
  lockWaitMs: number;
  signal?: AbortSignal;
}

/** Opens the warehouse, waiting while another process holds a DuckDB file. */
export async function openLogSink(target: RunLogTarget): Promise<Sink> {
  const { createSink } = await import("../sinks/create-sink.ts");
  const until = Date.now() + target.lockWaitMs;
  for (;;) {
    try {
      return await createSink(target.url);
    } catch (err) {
      if (!(err instanceof WarehouseFileLockedError) || Date.now() >= until) throw err;
      await sleep(Math.min(2000, Math.max(50, until - Date.now())), undefined, { signal: target.signal });
    }
  }
}

/**
 * Writes one run's sync_runs row and its people's sync_log rows. Rows are
 * upserted by (run id, person digest): a resumed run with the same id writes
 * each person once; the run row goes last, so a run row that says
 * `succeeded` has all its people.
 */
export async function writeRunLog(
  target: RunLogTarget,
  run: SyncRunRecord,
  people: PersonLog | undefined,
  constants: RunConstants,
): Promise<{ logged: number }> {
  const sink = await openLogSink(target);
  const where = parseWarehouseUrl(target.url);
  if (where.kind === "duckdb") {
    // The sink makes or migrates the tables; the rows go in bulk (duckdb-bulk.ts).
    try {
      await sink.prepare([SYNC_LOG_TABLE]);
    } finally {
      await sink.close();
    }
    // Loaded here, not at the top: an import that logs nothing into DuckDB never loads DuckDB.
    const { bulkLoadDuckDb } = await import("./duckdb-bulk.ts");
    const scratch = `${where.path}.sync-log-${process.pid}-${Date.now()}.ndjson`;
    const lines = people?.compactLines();
    return {
      logged: await bulkLoadDuckDb(where.path, scratch, run, lines ? { lines, constants } : undefined),
    };
  }
  try {
    await sink.prepare([SYNC_LOG_TABLE]);
    let logged = 0;
    let chunk: SyncLogRow[] = [];
    const rows = people?.rows({
      runId: run.runId,
      job: constants.job,
      studyId: constants.studyId,
      at: constants.at,
    });
    for (const row of rows ?? []) {
      chunk.push(row);
      if (chunk.length >= ROWS_PER_COMMIT) {
        logged += (
          await sink.commit({ runId: run.runId, upsert: { table: SYNC_LOG_TABLE.name, rows: chunk } })
        ).upserted;
        chunk = [];
      }
    }
    const last = await sink.commit({
      runId: run.runId,
      ...(chunk.length ? { upsert: { table: SYNC_LOG_TABLE.name, rows: chunk } } : {}),
      run,
    });
    return { logged: logged + last.upserted };
  } finally {
    await sink.close();
  }
}

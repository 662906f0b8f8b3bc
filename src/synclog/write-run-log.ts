import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { WarehouseFileLockedError } from "../errors/index.ts";
import { personDigest } from "../imports/unverified-people.ts";
import type { Sink, SyncRunRecord } from "../sinks/index.ts";
import { parseWarehouseUrl } from "../sinks/warehouse-url.ts";
import type { PartsLoad, RunConstants } from "./log-file-sql.ts";
import { LOG_FILE_COLUMNS, type LogPart } from "./person-log.ts";
import { SYNC_LOG_TABLE, type SyncLogOutcome, type SyncLogRow, type SyncLogVerification } from "./table.ts";

/** Rows per commit into the file warehouse: big enough for few parts, small enough to stage lightly. */
const ROWS_PER_COMMIT = 10_000;

export interface RunLogTarget {
  url: string;
  /** How long to wait for a DuckDB file another process has open; 0 tries once. */
  lockWaitMs: number;
  signal?: AbortSignal;
}

/** Does `work` on the warehouse, again while another process holds a DuckDB file, for up to lockWaitMs. */
async function whileLocked<T>(target: RunLogTarget, work: () => Promise<T>): Promise<T> {
  const until = Date.now() + target.lockWaitMs;
  for (;;) {
    try {
      return await work();
    } catch (err) {
      if (!(err instanceof WarehouseFileLockedError) || Date.now() >= until) throw err;
      await sleep(Math.min(2000, Math.max(50, until - Date.now())), undefined, { signal: target.signal });
    }
  }
}

/** Opens the warehouse, waiting while another process holds a DuckDB file. */
export async function openLogSink(target: RunLogTarget): Promise<Sink> {
  const { createSink } = await import("../sinks/create-sink.ts");
  return whileLocked(target, () => createSink(target.url));
}

/**
 * What a DuckDB or PostgreSQL warehouse needs before a run's log is loaded:
 * its tables made or migrated (by the sink), and the bulk loader's modules
 * loaded. A run starts this as it starts, so that its end, on the import's
 * path, only loads the rows; the warehouse is held only while this runs.
 * Loaded here, not at the top: an import that logs nothing into DuckDB never
 * loads DuckDB.
 */
export async function prepareRunLog(target: RunLogTarget): Promise<void> {
  const where = parseWarehouseUrl(target.url);
  if (where.kind === "file") return;
  const sink = await openLogSink(target);
  try {
    await sink.prepare([SYNC_LOG_TABLE]);
  } finally {
    await sink.close();
  }
  await (where.kind === "duckdb" ? import("./duckdb-bulk.ts") : import("./postgres-bulk.ts"));
}

/** Whether parts of a run's log can be loaded while the run goes on: the file warehouse takes them at the end. */
export function loadsAsTheRunGoes(target: RunLogTarget): boolean {
  return parseWarehouseUrl(target.url).kind !== "file";
}

/**
 * Loads parts of a run's log into DuckDB or PostgreSQL, and with them the
 * run's sync_runs row when given (its last load), in one transaction;
 * waits for a DuckDB file another process holds, up to lockWaitMs.
 */
export async function loadRunLog(
  target: RunLogTarget,
  run: SyncRunRecord | undefined,
  load: PartsLoad,
): Promise<number> {
  const where = parseWarehouseUrl(target.url);
  if (where.kind === "duckdb") {
    const { bulkLoadDuckDb } = await import("./duckdb-bulk.ts");
    return whileLocked(target, () => bulkLoadDuckDb(where.path, run, load));
  }
  if (where.kind !== "postgres") throw new Error(`the ${where.kind} warehouse takes a run's log at its end`);
  const { bulkLoadPostgres } = await import("./postgres-bulk.ts");
  return bulkLoadPostgres(target.url, run, load);
}

/**
 * Writes one run's sync_runs row and the sync_log rows of the parts of its
 * log not loaded yet, the latest line of each person deciding. DuckDB and
 * PostgreSQL load the parts in one statement, in one transaction with the
 * run row; the file warehouse takes the rows through its sink, the run row
 * last. Either way a run row that says `succeeded` has all its people.
 * `prepared`: whether prepareRunLog, started earlier, succeeded; it is done
 * here otherwise.
 */
export async function writeRunLog(
  target: RunLogTarget,
  run: SyncRunRecord,
  load: PartsLoad,
  prepared?: Promise<boolean>,
): Promise<{ logged: number }> {
  if (loadsAsTheRunGoes(target)) {
    if (!(await prepared)) await prepareRunLog(target);
    return { logged: await loadRunLog(target, run, load) };
  }
  const sink = await openLogSink(target);
  try {
    await sink.prepare([SYNC_LOG_TABLE]);
    const rows = [...(await latestLines(load.parts)).values()];
    let logged = 0;
    for (let i = 0; i < rows.length; i += ROWS_PER_COMMIT) {
      const chunk = rows.slice(i, i + ROWS_PER_COMMIT).map((l) => logRow(l, run.runId, load.constants));
      logged += (await sink.commit({ runId: run.runId, upsert: { table: SYNC_LOG_TABLE.name, rows: chunk } }))
        .upserted;
    }
    await sink.commit({ runId: run.runId, run });
    return { logged };
  } finally {
    await sink.close();
  }
}

type LogLine = Record<(typeof LOG_FILE_COLUMNS)[number], string | null>;

/** The parts' lines, the last of each person (the parts are in answer order). */
async function latestLines(parts: readonly LogPart[]): Promise<Map<string, LogLine>> {
  const latest = new Map<string, LogLine>();
  for (const part of parts) {
    const lines = createInterface({
      input: createReadStream(part.file, "utf8"),
      crlfDelay: Number.POSITIVE_INFINITY,
    });
    let header = true;
    for await (const text of lines) {
      if (header || !text) {
        header = false;
        continue;
      }
      const fields = csvFields(text);
      const line = Object.fromEntries(LOG_FILE_COLUMNS.map((c, i) => [c, fields[i] || null])) as LogLine;
      latest.delete(line.d as string);
      latest.set(line.d as string, line);
    }
  }
  return latest;
}

function logRow(l: LogLine, runId: string, c: RunConstants): SyncLogRow {
  const named = l.n === "#";
  const identifier = named ? c.identifier : (l.n ?? c.identifier);
  return {
    run_id: runId,
    person_digest: named ? (l.d as string) : personDigest(identifier, l.d as string),
    job: c.job,
    study_id: c.studyId,
    identifier,
    source_rows: (l.r ?? "").split(" ").map(Number),
    outcome: l.o as SyncLogOutcome,
    reason: l.x,
    codes: l.c,
    import_id: l.i,
    verification: l.v as SyncLogVerification | null,
    logged_at: c.at,
    checked_at: null,
  };
}

/** The fields of one CSV line as person-log.ts writes them (no line breaks inside a field). */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let value = "";
      let j = i + 1;
      for (;;) {
        const q = line.indexOf('"', j);
        if (q === -1) throw new Error("sync log file: an unterminated quoted field");
        value += line.slice(j, q);
        if (line[q + 1] === '"') {
          value += '"';
          j = q + 2;
        } else {
          i = q + 2;
          break;
        }
      }
      fields.push(value);
    } else {
      const comma = line.indexOf(",", i);
      const end = comma === -1 ? line.length : comma;
      fields.push(line.slice(i, end));
      i = end + 1;
    }
  }
  return fields;
}

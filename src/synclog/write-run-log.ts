import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { WarehouseFileLockedError } from "../errors/index.ts";
import { personDigest } from "../imports/unverified-people.ts";
import type { Sink, SyncRunRecord } from "../sinks/index.ts";
import { parseWarehouseUrl } from "../sinks/warehouse-url.ts";
import type { RunConstants } from "./log-file-sql.ts";
import { LOG_FILE_COLUMNS } from "./person-log.ts";
import { SYNC_LOG_TABLE, type SyncLogOutcome, type SyncLogRow, type SyncLogVerification } from "./table.ts";

/** Rows per commit into the file warehouse: big enough for few parts, small enough to stage lightly. */
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

/** A run's log file (person-log.ts), closed: where it is, how many lines it has, and whether a person may have several. */
export interface RunLogFile {
  file: string;
  lines: number;
  mayRepeat: boolean;
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

/**
 * Writes one run's sync_runs row and its people's sync_log rows from the
 * run's log file, the latest line of each person deciding. DuckDB and
 * PostgreSQL load the file in one statement, in one transaction with the run
 * row, the run's earlier rows (a resume under the same id) replaced; the file
 * warehouse takes the rows through its sink, the run row last, so a run row
 * that says `succeeded` has all its people. `prepared`: whether
 * prepareRunLog, started earlier, succeeded; it is done here otherwise.
 */
export async function writeRunLog(
  target: RunLogTarget,
  run: SyncRunRecord,
  people: RunLogFile | undefined,
  constants: RunConstants,
  prepared?: Promise<boolean>,
): Promise<{ logged: number }> {
  const where = parseWarehouseUrl(target.url);
  if (where.kind !== "file") {
    if (!(await prepared)) await prepareRunLog(target);
    const load = people ? { ...people, constants } : undefined;
    if (where.kind === "duckdb") {
      const { bulkLoadDuckDb } = await import("./duckdb-bulk.ts");
      return { logged: await bulkLoadDuckDb(where.path, run, load) };
    }
    const { bulkLoadPostgres } = await import("./postgres-bulk.ts");
    return { logged: await bulkLoadPostgres(target.url, run, load) };
  }
  const sink = await openLogSink(target);
  try {
    await sink.prepare([SYNC_LOG_TABLE]);
    const rows = people ? [...(await latestLines(people.file)).values()] : [];
    let logged = 0;
    for (let i = 0; i < rows.length; i += ROWS_PER_COMMIT) {
      const chunk = rows.slice(i, i + ROWS_PER_COMMIT).map((l) => logRow(l, run.runId, constants));
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

/** The log file's lines, the last of each person (the file is in answer order). */
async function latestLines(file: string): Promise<Map<string, LogLine>> {
  const latest = new Map<string, LogLine>();
  const lines = createInterface({
    input: createReadStream(file, "utf8"),
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

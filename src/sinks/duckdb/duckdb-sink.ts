import { chmod, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import {
  BIGINT,
  BOOLEAN,
  DATE,
  DOUBLE,
  type DuckDBAppender,
  type DuckDBConnection,
  DuckDBDataChunk,
  DuckDBInstance,
  DuckDBPendingResultState,
  type DuckDBPreparedStatement,
  type DuckDBResult,
  type DuckDBType,
  type DuckDBValue,
  dateValue,
  LIST,
  listValue,
  VARCHAR,
} from "@duckdb/node-api";
import { z } from "zod";
import { SinkError, WarehouseFileLockedError } from "../../errors/index.ts";
import {
  addColumnSql,
  createTableSql,
  keysStatement,
  missingColumns,
  readTableSql,
  replaceByKeySql,
  softDeleteStatement,
} from "../ddl.ts";
import {
  CATCH_UP_ROWS,
  closeGoneHistory,
  DUCKDB_HISTORY,
  HistoryCatchUp,
  type HistoryDb,
  prepareHistory,
} from "../history/index.ts";
import { quoteIdent } from "../identifiers.ts";
import { runFromRow, upsertRunParams } from "../run-record.ts";
import { allColumns } from "../system-columns.ts";
import type {
  ColumnSchema,
  Commit,
  CommitResult,
  KeyQuery,
  Row,
  Sink,
  SyncRunRecord,
  TableSchema,
} from "../types.ts";
import {
  errorText,
  jsonText,
  lastRowPerKey,
  plainRows,
  requireTable,
  toDate,
  toEpochDays,
  toStringArray,
} from "../values.ts";
import { lockHolder } from "./lock-holder.ts";
import { DUCKDB_MIGRATIONS } from "./migrations.ts";
import { DUCKDB_SQL } from "./sql.ts";

export const EngineSettings = z.object({
  memoryLimit: z.string(),
  threads: z.coerce.number(),
  checkpointThreshold: z.string(),
  allocatorFlushThreshold: z.string(),
  rowGroupSize: z.coerce.number().nullable(),
});
export type EngineSettings = z.infer<typeof EngineSettings>;

/** Column types of the warehouse in DuckDB; the benchmark's bare table uses them too. */
export const DUCKDB_TYPES = {
  text: "VARCHAR",
  bigint: "BIGINT",
  double: "DOUBLE",
  boolean: "BOOLEAN",
  date: "DATE",
  // Stored as UTC wall time: TIMESTAMPTZ would tie readers to the ICU extension.
  timestamp: "TIMESTAMP",
  text_array: "VARCHAR[]",
  json: "JSON",
} as const;

const STRING_LIST = LIST(VARCHAR);
/**
 * DuckDB's buffer pool; beyond it DuckDB spills to a temp file beside the
 * warehouse. The default would take 80% of the machine. 16MB was too little:
 * an 800,000-row export failed with "could not allocate block". 32MB since
 * history's commits stopped holding a hash table of the stage (64MB before):
 * the 800,000-row export's peak RSS fell by ~10 MB without history and ~25 MB
 * with it (docs/engineering/performance-log.md).
 */
export const DUCKDB_MEMORY_LIMIT = "32MB";
/** Worker threads: the merge of a 5,000-row commit gains little from more, and each holds buffers. */
export const DUCKDB_THREADS = 1;
/**
 * Rows upserted between two checkpoints. Rows committed since the last
 * checkpoint live uncompressed in memory (~1 KB a participant with its `_raw`
 * text), and the WAL grows with them; 50,000 held ~40 MB.
 */
export const CHECKPOINT_ROWS = 10_000;
/**
 * Rows per row group of the warehouse's tables (DuckDB's default: 122,880).
 * A checkpoint rewrites the last, partly filled row group whole, holding it
 * uncompressed while it compresses it: with the default that was up to ~90 MB
 * of participants at once, the largest share of the export's peak memory.
 */
export const ROW_GROUP_ROWS = 8192;
/**
 * Freed memory DuckDB's allocator (jemalloc, linked into DuckDB on Linux)
 * returns to the system at once instead of keeping it for ~5 s: with the
 * default it held ~130 MB of freed pages during an export while ~26 MB were
 * in use. The setting's name speaks of bulk deallocations; 0 means every one.
 */
export const ALLOCATOR_FLUSH_THRESHOLD = "0B";
/** The warehouse file's name in SQL: it is attached to an in-memory instance (see open). */
const CATALOG = "warehouse";
const UTC_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$/;
const HISTORY_DIALECT = { ...DUCKDB_HISTORY, types: DUCKDB_TYPES };

export interface DuckDbSinkOptions {
  /** Rows a history may lag behind its table by; CATCH_UP_ROWS unless a test wants it smaller. */
  historyCatchUpRows?: number;
}

function stageName(table: string): string {
  return `_stage_${table}`;
}

/**
 * The embedded warehouse: one DuckDB file. Rows go through the Appender into
 * a temporary staging table and are merged by primary key, in the same
 * transaction as the stream's state and its sync_runs row.
 */
export class DuckDbSink implements Sink {
  readonly kind = "duckdb" as const;
  readonly displayUrl: string;
  readonly #instance: DuckDBInstance;
  readonly #conn: DuckDBConnection;
  readonly #tables = new Map<string, TableSchema>();
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Rows upserted since the last checkpoint. */
  #sinceCheckpoint = 0;
  /** One data chunk per table, reused by every commit (see appendRows). */
  readonly #chunks = new Map<string, DuckDBDataChunk>();
  /** The commit's statements, prepared once (see #execute); emptied when prepare changes the tables. */
  readonly #statements = new Map<string, DuckDBPreparedStatement>();
  /** The history of each table that keeps one, by the table's name. */
  readonly #histories = new Map<string, HistoryCatchUp>();
  /** Rows a history may lag behind its table by (CATCH_UP_ROWS). */
  readonly #catchUpRows: number;
  /** The time of the last commit, in ms: each commit's is later (see #commitTime). */
  #lastCommitMs = 0;

  private constructor(
    path: string,
    instance: DuckDBInstance,
    conn: DuckDBConnection,
    options: DuckDbSinkOptions,
  ) {
    this.#catchUpRows = options.historyCatchUpRows ?? CATCH_UP_ROWS;
    this.displayUrl = `duckdb:${path}`;
    this.#instance = instance;
    this.#conn = conn;
  }

  static async open(path: string, options: DuckDbSinkOptions = {}): Promise<DuckDbSink> {
    let instance: DuckDBInstance | undefined;
    try {
      const inMemory = path === ":memory:";
      if (!inMemory) await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      // The row group size is an option of ATTACH only, so the instance itself is in memory
      // and the warehouse file is attached to it; its temp files go where DuckDB would put them
      // for the file opened directly.
      instance = await DuckDBInstance.create(":memory:", {
        ...(inMemory ? {} : { temp_directory: `${path}.tmp` }),
        // Each automatic checkpoint rewrites the primary-key indexes, which grow with the
        // tables: during a bulk load that dominated. The sink checkpoints itself every
        // CHECKPOINT_ROWS rows instead, which also bounds what the WAL holds in memory.
        checkpoint_threshold: "1GB",
        // DuckDB's default takes 80% of the machine's RAM and a thread per core; the
        // warehouse shares its process with the exporter, which stays flat only if DuckDB does.
        memory_limit: DUCKDB_MEMORY_LIMIT,
        threads: String(DUCKDB_THREADS),
        allocator_bulk_deallocation_flush_threshold: ALLOCATOR_FLUSH_THRESHOLD,
      });
      const conn = await instance.connect();
      await conn.run(`ATTACH ${sqlString(path)} AS ${CATALOG} (ROW_GROUP_SIZE ${ROW_GROUP_ROWS})`);
      await conn.run(`USE ${CATALOG}`);
      // The warehouse holds participants' emails and phones: owner-only, like every file we write.
      if (!inMemory) await chmod(path, 0o600);
      return new DuckDbSink(path, instance, conn, options);
    } catch (err) {
      instance?.closeSync();
      const holder = lockHolder(err);
      if (holder) throw new WarehouseFileLockedError(path, holder, { cause: err });
      throw new SinkError(`cannot open the DuckDB warehouse at ${path}: ${errorText(err)}`, {
        cause: err,
        retryable: false,
      });
    }
  }

  /** The engine settings the sink relies on for its memory, as DuckDB reports them. */
  engineSettings(): Promise<EngineSettings> {
    return this.#serial(async () => {
      const [row] = (await this.#conn.runAndReadAll(DUCKDB_SQL.engineSettings, [CATALOG])).getRowObjectsJS();
      return EngineSettings.parse(row);
    });
  }

  /**
   * Runs one of the commit's statements on this thread, one DuckDB task at a
   * time, giving the event loop a turn between tasks. `conn.run` would parse,
   * plan and execute it on whichever of libuv's pool threads is free; glibc
   * gives each of those threads an allocator arena of its own, which keeps
   * what DuckDB frees there: spread over four threads, that was ~20 MB of the
   * export's peak RSS (docs/engineering/performance-log.md). Prepared once per sink, the
   * statement reaches a pool thread only to hand over its small result.
   */
  async #execute(sql: string, values?: readonly DuckDBValue[]): Promise<DuckDBResult> {
    let prepared = this.#statements.get(sql);
    if (!prepared) {
      prepared = await this.#conn.prepare(sql);
      this.#statements.set(sql, prepared);
    }
    prepared.clearBindings();
    return runPrepared(prepared, values);
  }

  /**
   * #execute for a statement of the history, prepared for this run only:
   * DuckDB keeps a prepared statement's last hash table until it runs again,
   * and a catch-up's holds the keys of up to CATCH_UP_ROWS rows.
   */
  async #executeOnce(sql: string, values?: readonly DuckDBValue[]): Promise<DuckDBResult> {
    const prepared = await this.#conn.prepare(sql);
    try {
      return await runPrepared(prepared, values);
    } finally {
      prepared.destroySync();
    }
  }

  /** The database as the history sees it, inside the open transaction. */
  readonly #historyDb: HistoryDb = {
    run: (sql, params) => this.#executeOnce(sql, params),
    first: async (sql, params) => {
      const [row] = await (await this.#executeOnce(sql, params)).getRowObjectsJS();
      return { n: Number(row?.n ?? 0), last: typeof row?.last === "string" ? row.last : null };
    },
    readState: async (stream) => {
      const rows = await (await this.#execute(DUCKDB_SQL.readState, [stream])).getRowObjectsJS();
      const value = rows[0]?.value;
      return typeof value === "string" ? JSON.parse(value) : undefined;
    },
    writeState: async (stream, value, runId, now) => {
      await this.#execute(DUCKDB_SQL.upsertState, [stream, jsonText(value), runId, now.toISOString()]);
    },
  };

  /** #execute for the history hooks. */
  readonly #run = (sql: string, params?: readonly (string | null)[]) => this.#execute(sql, params);

  /**
   * The commit's time, later than the last commit's and the history's marks:
   * the history tells the rows it has not seen by a `_synced_at` after its mark.
   */
  #commitTime(): Date {
    this.#lastCommitMs = Math.max(Date.now(), this.#lastCommitMs + 1);
    return new Date(this.#lastCommitMs);
  }

  /** Forgets the prepared statements: their plans name tables that prepare may alter. */
  #forgetStatements(): void {
    for (const statement of this.#statements.values()) statement.destroySync();
    this.#statements.clear();
  }

  /** One statement sequence at a time: a DuckDB connection runs one transaction. */
  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  prepare(tables: readonly TableSchema[]): Promise<void> {
    return this.#serial(async () => {
      try {
        this.#forgetStatements();
        await this.#conn.run(DUCKDB_SQL.createMigrations);
        const applied = new Set(
          (await this.#conn.runAndReadAll(DUCKDB_SQL.appliedMigrations)).getRowsJS().map((r) => Number(r[0])),
        );
        for (const m of DUCKDB_MIGRATIONS) {
          if (applied.has(m.version)) continue;
          await this.#conn.run("BEGIN");
          try {
            await this.#conn.run(m.sql);
            await this.#conn.run(DUCKDB_SQL.recordMigration, [m.version, m.name, new Date().toISOString()]);
            await this.#conn.run("COMMIT");
          } catch (err) {
            await this.#conn.run("ROLLBACK").catch(() => undefined);
            throw err;
          }
        }
        for (const table of tables) {
          await this.#conn.run(createTableSql(table, DUCKDB_TYPES));
          const existing = new Set(
            (await this.#conn.runAndReadAll(DUCKDB_SQL.tableColumns, [table.name]))
              .getRowsJS()
              .map((r) => String(r[0])),
          );
          for (const col of missingColumns(table, existing)) {
            await this.#conn.run(addColumnSql(table.name, col, DUCKDB_TYPES));
          }
          const stageCols = allColumns(table).map((c) => `${quoteIdent(c.name)} ${DUCKDB_TYPES[c.type]}`);
          await this.#conn.run(
            `CREATE OR REPLACE TEMP TABLE ${quoteIdent(stageName(table.name))} (${stageCols.join(", ")})`,
          );
          this.#tables.set(table.name, table);
          this.#chunks.delete(table.name);
          const history = await prepareHistory(
            table,
            HISTORY_DIALECT,
            (sql) => this.#conn.run(sql),
            async (name) =>
              new Set(
                (await this.#conn.runAndReadAll(DUCKDB_SQL.tableColumns, [name]))
                  .getRowsJS()
                  .map((r) => String(r[0])),
              ),
          );
          if (history) {
            this.#tables.set(history.name, history);
            await this.#openHistory(table);
          }
        }
      } catch (err) {
        throw new SinkError(`cannot prepare the DuckDB warehouse: ${errorText(err)}`, { cause: err });
      }
    });
  }

  /** The history's catch-up for `table`, and what a killed process left for it, in a transaction. */
  async #openHistory(table: TableSchema): Promise<void> {
    await this.#execute("BEGIN");
    try {
      const history = await HistoryCatchUp.open(table, HISTORY_DIALECT, this.#historyDb);
      await this.#execute("COMMIT");
      history.committed();
      this.#histories.set(table.name, history);
      this.#lastCommitMs = Math.max(this.#lastCommitMs, history.mark.getTime());
    } catch (err) {
      await this.#conn.run("ROLLBACK").catch(() => undefined);
      throw err;
    }
  }

  #chunkFor(table: TableSchema): DuckDBDataChunk {
    let chunk = this.#chunks.get(table.name);
    if (!chunk) {
      chunk = DuckDBDataChunk.create(allColumns(table).map(chunkType));
      this.#chunks.set(table.name, chunk);
    }
    return chunk;
  }

  readState(stream: string): Promise<unknown> {
    return this.#serial(async () => {
      const rows = (await this.#conn.runAndReadAll(DUCKDB_SQL.readState, [stream])).getRowObjectsJS();
      const value = rows[0]?.value;
      return typeof value === "string" ? JSON.parse(value) : undefined;
    });
  }

  commit(commit: Commit): Promise<CommitResult> {
    return this.#serial(async () => {
      const upserted = commit.upsert && this.#histories.get(commit.upsert.table);
      const keys = upserted ? this.#keysOf(commit) : [];
      await this.#catchUpBefore(commit, keys);
      const result = await this.#commitNow(commit, this.#commitTime());
      upserted?.wrote(keys);
      this.#sinceCheckpoint += result.upserted;
      if (this.#sinceCheckpoint >= CHECKPOINT_ROWS) await this.#checkpoint();
      await this.#catchUpAfter(commit);
      return result;
    });
  }

  /**
   * Catches the history up first when the commit would overwrite a row it
   * has not seen (its version would be lost), or closes what a full refresh
   * found gone (the versions of what the pass wrote open first).
   */
  async #catchUpBefore(commit: Commit, keys: readonly string[]): Promise<void> {
    const upserted = commit.upsert && this.#histories.get(commit.upsert.table);
    if (upserted?.overwrites(keys)) await this.#catchUp(upserted, commit.runId);
    const gone = commit.softDelete && this.#histories.get(commit.softDelete.table);
    if (gone && gone.unseen > 0) await this.#catchUp(gone, commit.runId);
  }

  /** The keys of the rows a commit upserts, as text. */
  #keysOf(commit: Commit): string[] {
    if (!commit.upsert) return [];
    const key = requireTable(this.#tables, commit.upsert.table).primaryKey[0] as string;
    return commit.upsert.rows.map((r) => String(r[key]));
  }

  /**
   * Every CATCH_UP_ROWS rows, and when a resource's run has ended (its
   * history then holds every row it wrote). After a checkpoint: the rows
   * committed since the last one are held in memory until it, as the
   * versions a catch-up opens are until it commits.
   */
  async #catchUpAfter(commit: Commit): Promise<void> {
    const ended = commit.run !== undefined && commit.run.status !== "running";
    const due = [...this.#histories.values()].filter(
      (h) => h.unseen >= this.#catchUpRows || (ended && h.unseen > 0),
    );
    if (due.length === 0) return;
    if (this.#sinceCheckpoint > 0) await this.#checkpoint();
    for (const h of due) await this.#catchUp(h, commit.runId);
    await this.#checkpoint();
  }

  /** One catch-up in a transaction of its own, up to the last commit. */
  async #catchUp(history: HistoryCatchUp, runId: string): Promise<void> {
    await this.#execute("BEGIN");
    try {
      await history.catchUp(this.#historyDb, new Date(this.#lastCommitMs), runId);
      await this.#execute("COMMIT");
      history.committed();
    } catch (err) {
      history.rolledBack();
      await this.#conn.run("ROLLBACK").catch(() => undefined);
      throw new SinkError(`DuckDB history catch-up failed: ${errorText(err)}`, { cause: err });
    }
  }

  /** After a commit: the data is durable in the WAL already; a failed checkpoint is retried next time. */
  async #checkpoint(): Promise<void> {
    this.#sinceCheckpoint = 0;
    await this.#execute(`CHECKPOINT ${CATALOG}`).catch(() => undefined);
  }

  /** The commit's one transaction: rows, deletions, state and its sync_runs row. */
  async #commitNow(commit: Commit, now: Date): Promise<CommitResult> {
    const conn = this.#conn;
    const result: CommitResult = { upserted: 0, deleted: 0 };
    await this.#execute("BEGIN");
    try {
      if (commit.upsert && commit.upsert.rows.length > 0) {
        const table = requireTable(this.#tables, commit.upsert.table);
        const rows = lastRowPerKey(table, commit.upsert.rows);
        const stage = quoteIdent(stageName(table.name));
        const appender = await conn.createAppender(stageName(table.name), "main", "temp");
        try {
          appendRows(appender, this.#chunkFor(table), allColumns(table), rows, commit.runId, now);
          appender.flushSync();
        } finally {
          appender.closeSync();
        }
        for (const sql of replaceByKeySql(table, quoteIdent(table.name), `temp.main.${stage}`))
          await this.#execute(sql);
        await this.#execute(`DELETE FROM temp.main.${stage}`);
        result.upserted = rows.length;
      }
      if (commit.softDelete) {
        const sd = commit.softDelete;
        const table = requireTable(this.#tables, sd.table);
        const { sql, params } = softDeleteStatement(sd, now, "::TIMESTAMP");
        result.deleted = Number((await conn.run(sql, params)).rowsChanged);
        await closeGoneHistory(table, HISTORY_DIALECT, this.#run, now, commit.runId);
      }
      if (commit.state) {
        if (commit.state.value === null) {
          await this.#execute(DUCKDB_SQL.deleteState, [commit.state.stream]);
        } else {
          await this.#execute(DUCKDB_SQL.upsertState, [
            commit.state.stream,
            jsonText(commit.state.value),
            commit.runId,
            now.toISOString(),
          ]);
        }
      }
      if (commit.run) await this.#execute(DUCKDB_SQL.upsertRun, upsertRunParams(commit.run));
      await this.#execute("COMMIT");
    } catch (err) {
      await conn.run("ROLLBACK").catch(() => undefined);
      if (err instanceof SinkError) throw err;
      throw new SinkError(`DuckDB commit failed: ${errorText(err)}`, { cause: err });
    }
    return result;
  }

  readKeys(query: KeyQuery): Promise<string[]> {
    return this.#serial(async () => {
      requireTable(this.#tables, query.table);
      const { sql, params } = keysStatement(query);
      const reader = await this.#conn.runAndReadAll(sql, params);
      return reader.getRowsJS().map((r) => String(r[0]));
    });
  }

  readTable(name: string): Promise<Record<string, unknown>[]> {
    return this.#serial(async () => {
      const table = requireTable(this.#tables, name);
      return plainRows(table, (await this.#conn.runAndReadAll(readTableSql(table))).getRowObjectsJS());
    });
  }

  readRuns(): Promise<SyncRunRecord[]> {
    return this.#serial(async () =>
      (await this.#conn.runAndReadAll(DUCKDB_SQL.readRuns)).getRowObjectsJS().map(runFromRow),
    );
  }

  close(): Promise<void> {
    return this.#serial(async () => {
      if (this.#closed) return;
      this.#closed = true;
      try {
        await this.#execute(`CHECKPOINT ${CATALOG}`);
      } finally {
        // Closing the connection destroys the statements it prepared.
        this.#statements.clear();
        this.#conn.closeSync();
        this.#instance.closeSync();
      }
    });
  }
}

/** Runs a prepared statement on this thread, one DuckDB task at a time (see DuckDbSink's #execute). */
async function runPrepared(
  prepared: DuckDBPreparedStatement,
  values: readonly DuckDBValue[] | undefined,
): Promise<DuckDBResult> {
  if (values) prepared.bind([...values]);
  const pending = prepared.start();
  // With one DuckDB thread every task runs here; a task is bounded (a batch of vectors, or one checkpoint step).
  while (pending.runTask() !== DuckDBPendingResultState.RESULT_READY) await nextTurn();
  return pending.getResult();
}

/** A string literal: ATTACH takes no parameters. */
function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** Rows per data chunk: DuckDB's vector size, the most one chunk holds. */
const CHUNK_ROWS = 2048;

/**
 * The chunk's type of a column. Timestamps go in as UTC ISO text, which
 * DuckDB casts on append faster than a value object per row; JSON is text.
 */
function chunkType(col: ColumnSchema): DuckDBType {
  switch (col.type) {
    case "text":
    case "timestamp":
    case "json":
      return VARCHAR;
    case "bigint":
      return BIGINT;
    case "double":
      return DOUBLE;
    case "boolean":
      return BOOLEAN;
    case "date":
      return DATE;
    case "text_array":
      return STRING_LIST;
  }
}

/** One value of `col` as the chunk's column type takes it. */
function chunkValue(col: ColumnSchema, v: unknown): DuckDBValue {
  if (v === null || v === undefined) return null;
  switch (col.type) {
    case "text":
      return typeof v === "string" ? v : String(v);
    case "bigint":
      return typeof v === "bigint" ? v : BigInt(Math.trunc(Number(v)));
    case "double":
      return Number(v);
    case "boolean":
      return Boolean(v);
    case "date":
      return dateValue(toEpochDays(v, col.name));
    case "timestamp":
      // DuckDB's cast drops a non-UTC offset instead of applying it: those go through Date.
      return typeof v === "string" && UTC_ISO.test(v) ? v : toDate(v, col.name).toISOString();
    case "text_array":
      return listValue(toStringArray(v, col.name));
    case "json":
      return jsonText(v);
  }
}

/**
 * Appends the rows a chunk of up to CHUNK_ROWS at a time, column by column:
 * one call into DuckDB per chunk instead of one per value. `chunk` is reused:
 * its native buffers are freed only when V8 collects the wrapper, and V8 does
 * not see their size — a chunk per batch let the process grow by hundreds of MB.
 */
function appendRows(
  appender: DuckDBAppender,
  chunk: DuckDBDataChunk,
  columns: readonly ColumnSchema[],
  rows: readonly Row[],
  runId: string,
  syncedAt: Date,
): void {
  const synced = syncedAt.toISOString();
  for (let from = 0; from < rows.length; from += CHUNK_ROWS) {
    const part = rows.slice(from, from + CHUNK_ROWS);
    chunk.reset();
    chunk.rowCount = part.length;
    chunk.setColumns(
      columns.map((col) => {
        if (col.name === "_synced_at") return part.map(() => synced);
        if (col.name === "_run_id") return part.map(() => runId);
        return part.map((row) => chunkValue(col, row[col.name]));
      }),
    );
    appender.appendDataChunk(chunk);
  }
}

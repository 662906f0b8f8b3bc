import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { SinkError } from "../../errors/index.ts";
import {
  addColumnSql,
  createTableSql,
  keysStatement,
  mergeSql,
  missingColumns,
  readTableSql,
  softDeleteStatement,
} from "../ddl.ts";
import { closeGoneHistory, mergeHistory, POSTGRES_HISTORY, prepareHistory } from "../history/index.ts";
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
import { errorText, jsonText, lastRowPerKey, plainRows, requireTable } from "../values.ts";
import { copyLine } from "./copy-text.ts";
import { POSTGRES_MIGRATIONS } from "./migrations.ts";
import { POSTGRES_SQL } from "./sql.ts";

/** Column types of the warehouse in PostgreSQL; the benchmark's bare table uses them too. */
export const POSTGRES_TYPES = {
  text: "text",
  bigint: "bigint",
  double: "double precision",
  boolean: "boolean",
  date: "date",
  timestamp: "timestamptz",
  text_array: "text[]",
  json: "jsonb",
} as const;

const DATE_OID = 1082;
const HISTORY_DIALECT = { ...POSTGRES_HISTORY, types: POSTGRES_TYPES };
/** Rows per chunk written to the COPY stream: big enough to amortise writes, small enough to stay flat. */
const COPY_CHUNK_ROWS = 500;

function stageName(table: string): string {
  return `_stage_${table}`;
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://(unparseable)";
  }
}

export interface PostgresSinkOptions {
  /** Connections in the pool; one commit uses one. */
  maxConnections?: number;
}

/**
 * The production warehouse. A commit COPYs its rows into a temporary staging
 * table, merges them with INSERT … ON CONFLICT DO UPDATE, and writes the
 * stream's state and sync_runs row, all in one transaction.
 */
export class PostgresSink implements Sink {
  readonly kind = "postgres" as const;
  readonly displayUrl: string;
  readonly #pool: pg.Pool;
  readonly #tables = new Map<string, TableSchema>();
  /** Temporary tables live per connection: remember which connections have them. */
  readonly #staged = new WeakMap<pg.PoolClient, Set<string>>();
  /** Commits of one sink apply in the order they were made, whatever the pool does. */
  #commits: Promise<unknown> = Promise.resolve();

  constructor(url: string, options: PostgresSinkOptions = {}) {
    this.displayUrl = redact(url);
    this.#pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 2,
      types: {
        getTypeParser: ((oid: number, format?: "text" | "binary") =>
          oid === DATE_OID
            ? (v: string) => v
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // An idle connection dropped by the server must not crash the process.
    this.#pool.on("error", () => undefined);
  }

  async #withClient<T>(what: string, work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (err) {
      throw new SinkError(`cannot reach the PostgreSQL warehouse ${this.displayUrl}: ${errorText(err)}`, {
        cause: err,
      });
    }
    // A checked-out client has no 'error' listener of the pool's: a connection that dies under a
    // query (a reset, a backend ended) emits one anyway, and unheard it ends the process.
    let lost: unknown;
    const onError = (err: unknown) => {
      lost ??= err;
    };
    client.on("error", onError);
    let broken = false;
    try {
      return await work(client);
    } catch (err) {
      broken = true;
      if (err instanceof SinkError) throw err;
      if (lost !== undefined || connectionLost(err)) {
        throw new SinkError(
          `the PostgreSQL warehouse ${this.displayUrl} closed the connection during a ${what} (${errorText(err)}): the ${what} is kept whole or not at all; run the export again, it resumes from its last checkpoint`,
          { cause: err, code: "sink_connection_lost" },
        );
      }
      throw new SinkError(`PostgreSQL ${what} failed: ${errorText(err)}`, { cause: err });
    } finally {
      client.release(broken);
      client.off("error", onError);
    }
  }

  async #transaction<T>(client: pg.PoolClient, work: () => Promise<T>): Promise<T> {
    await client.query("BEGIN");
    try {
      const out = await work();
      await client.query("COMMIT");
      return out;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    }
  }

  prepare(tables: readonly TableSchema[]): Promise<void> {
    return this.#withClient("prepare", (client) =>
      this.#transaction(client, async () => {
        await client.query(POSTGRES_SQL.migrationLock);
        await client.query(POSTGRES_SQL.createMigrations);
        const applied = new Set(
          (await client.query<{ version: number }>(POSTGRES_SQL.appliedMigrations)).rows.map(
            (r) => r.version,
          ),
        );
        for (const m of POSTGRES_MIGRATIONS) {
          if (applied.has(m.version)) continue;
          await client.query(m.sql);
          await client.query(POSTGRES_SQL.recordMigration, [m.version, m.name]);
        }
        for (const table of tables) {
          await client.query(createTableSql(table, POSTGRES_TYPES));
          const existing = new Set(
            (await client.query<{ column_name: string }>(POSTGRES_SQL.tableColumns, [table.name])).rows.map(
              (r) => r.column_name,
            ),
          );
          for (const col of missingColumns(table, existing)) {
            await client.query(addColumnSql(table.name, col, POSTGRES_TYPES));
          }
          this.#tables.set(table.name, table);
          const history = await prepareHistory(
            table,
            HISTORY_DIALECT,
            (sql) => client.query(sql),
            async (name) =>
              new Set(
                (await client.query<{ column_name: string }>(POSTGRES_SQL.tableColumns, [name])).rows.map(
                  (r) => r.column_name,
                ),
              ),
          );
          if (history) this.#tables.set(history.name, history);
        }
      }),
    );
  }

  readState(stream: string): Promise<unknown> {
    return this.#withClient("state read", async (client) => {
      const res = await client.query<{ value: unknown }>(POSTGRES_SQL.readState, [stream]);
      return res.rows[0]?.value;
    });
  }

  async #ensureStage(client: pg.PoolClient, table: TableSchema): Promise<string> {
    const name = stageName(table.name);
    let staged = this.#staged.get(client);
    if (!staged) {
      staged = new Set();
      this.#staged.set(client, staged);
    }
    if (!staged.has(name)) {
      // Typed like the target: COPY parses each value while the rows stream in, so the
      // merge only moves them (measured: the merge took half the time of a text stage
      // cast on the way, and the whole commit ~15% less).
      const cols = allColumns(table).map((c) => `${quoteIdent(c.name)} ${POSTGRES_TYPES[c.type]}`);
      await client.query(`DROP TABLE IF EXISTS pg_temp.${quoteIdent(name)}`);
      await client.query(`CREATE TEMP TABLE ${quoteIdent(name)} (${cols.join(", ")}) ON COMMIT DELETE ROWS`);
      staged.add(name);
    }
    return `pg_temp.${quoteIdent(name)}`;
  }

  commit(commit: Commit): Promise<CommitResult> {
    const next = this.#commits.then(
      () => this.#commitNow(commit),
      () => this.#commitNow(commit),
    );
    this.#commits = next.catch(() => undefined);
    return next;
  }

  #commitNow(commit: Commit): Promise<CommitResult> {
    return this.#withClient("commit", async (client) => {
      const now = new Date();
      const result: CommitResult = { upserted: 0, deleted: 0 };
      let stage: string | undefined;
      const upsert = commit.upsert;
      if (upsert && upsert.rows.length > 0) {
        stage = await this.#ensureStage(client, requireTable(this.#tables, upsert.table));
      }
      await this.#transaction(client, async () => {
        if (upsert && stage) {
          const table = requireTable(this.#tables, upsert.table);
          const rows = lastRowPerKey(table, upsert.rows);
          const columns = allColumns(table);
          const colList = columns.map((c) => quoteIdent(c.name)).join(", ");
          const copy = client.query(copyFrom(`COPY ${stage} (${colList}) FROM STDIN`));
          // The pipeline hears the COPY's failure; a second report of it (the connection's own
          // error after the server's) would come when nothing listens any more.
          copy.on("error", () => undefined);
          await pipeline(Readable.from(copyChunks(columns, rows, commit.runId, now.toISOString())), copy);
          await client.query(mergeSql(table, quoteIdent(table.name), stage));
          await mergeHistory(
            table,
            stage,
            HISTORY_DIALECT,
            (sql, p) => client.query(sql, p ? [...p] : []),
            now,
            commit.runId,
            async (sql) => Number((await client.query<{ n: string }>(sql)).rows[0]?.n ?? 0),
          );
          result.upserted = rows.length;
        }
        if (commit.softDelete) {
          const sd = commit.softDelete;
          const table = requireTable(this.#tables, sd.table);
          const { sql, params } = softDeleteStatement(sd, now, "::timestamptz");
          result.deleted = (await client.query(sql, params)).rowCount ?? 0;
          await closeGoneHistory(
            table,
            HISTORY_DIALECT,
            (q, p) => client.query(q, p ? [...p] : []),
            now,
            commit.runId,
          );
        }
        if (commit.state) {
          if (commit.state.value === null) {
            await client.query(POSTGRES_SQL.deleteState, [commit.state.stream]);
          } else {
            await client.query(POSTGRES_SQL.upsertState, [
              commit.state.stream,
              jsonText(commit.state.value),
              commit.runId,
              now,
            ]);
          }
        }
        if (commit.run) await client.query(POSTGRES_SQL.upsertRun, upsertRunParams(commit.run));
      });
      return result;
    });
  }

  readKeys(query: KeyQuery): Promise<string[]> {
    return this.#withClient("key read", async (client) => {
      requireTable(this.#tables, query.table);
      const { sql, params } = keysStatement(query);
      const res = await client.query<{ key: unknown }>(sql, params);
      return res.rows.map((r) => String(r.key));
    });
  }

  readTable(name: string): Promise<Record<string, unknown>[]> {
    return this.#withClient("table read", async (client) => {
      const table = requireTable(this.#tables, name);
      return plainRows(table, (await client.query<Record<string, unknown>>(readTableSql(table))).rows);
    });
  }

  readRuns(): Promise<SyncRunRecord[]> {
    return this.#withClient("run read", async (client) =>
      (await client.query<Record<string, unknown>>(POSTGRES_SQL.readRuns)).rows.map(runFromRow),
    );
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}

/**
 * SQLSTATE classes and codes of a connection the server ended or lost: 08
 * (connection exception), 57P01-57P03 (administrator or crash shutdown,
 * cannot connect now).
 */
const LOST_SQLSTATE = /^(08...|57P0[123])$/;
/** Node's socket errors and pg's own words for a connection that went away. */
const LOST_SOCKET = new Set([
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ECONNABORTED",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);
const LOST_WORDS = /Connection terminated|not queryable|connection error/i;

/** Whether `err` is the connection going away rather than the statement failing. */
function connectionLost(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (LOST_SQLSTATE.test(code) || LOST_SOCKET.has(code))) return true;
  return LOST_WORDS.test(err.message);
}

function* copyChunks(
  columns: readonly ColumnSchema[],
  rows: readonly Row[],
  runId: string,
  syncedAt: string,
): Generator<string> {
  let chunk = "";
  let n = 0;
  for (const row of rows) {
    chunk += copyLine(columns, row, runId, syncedAt);
    if (++n === COPY_CHUNK_ROWS) {
      yield chunk;
      chunk = "";
      n = 0;
    }
  }
  if (chunk) yield chunk;
}

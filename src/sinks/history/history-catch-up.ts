import { z } from "zod";
import type { TableSchema } from "../types.ts";
import { catchUpSql, catchUpStream } from "./catch-up-sql.ts";
import type { HistoryDialect } from "./history-sql.ts";

/**
 * Rows written since the history last caught up, beyond which the sink
 * catches up. Each catch-up reads the whole history once, and holds the
 * versions it opens in memory until they are committed.
 */
export const CATCH_UP_ROWS = 50_000;

/** How the history reaches its database, inside the transaction the sink opened. */
export interface HistoryDb {
  run(sql: string, params?: readonly string[]): Promise<unknown>;
  /** The first row's `n` (a count) and, when the statement has it, its `last` as text. */
  first(sql: string, params?: readonly string[]): Promise<{ n: number; last: string | null }>;
  readState(stream: string): Promise<unknown>;
  writeState(stream: string, value: unknown, runId: string, now: Date): Promise<void>;
}

const Mark = z.object({ mergedThrough: z.iso.datetime() });

/**
 * DuckDB's history of one table, kept behind the table by up to
 * CATCH_UP_ROWS rows (catchUpSql says how it catches up). Its mark, the
 * commit time up to which the history holds every row of the table, is in
 * sync_state and moves in the transaction that caught up, so a kill at any
 * point leaves rows the next catch-up finds. The sink catches up in a
 * transaction of its own: when it opens the warehouse (what a killed process
 * left), before a commit that overwrites a row the history has not seen or
 * closes what a full refresh found gone, when a run's resource ends, and
 * every CATCH_UP_ROWS rows.
 */
export class HistoryCatchUp {
  readonly #table: TableSchema;
  readonly #sql: NonNullable<ReturnType<typeof catchUpSql>>;
  #mark: string;
  /**
   * The keys of the rows committed since the mark. The sink is the
   * warehouse's one writer and catches up when it opens it, so they are
   * known here: none after open, then those of each commit.
   */
  readonly #unseen = new Set<string>();
  /** The mark as the open transaction moved it; kept only if it commits. */
  #next: string | undefined;

  private constructor(table: TableSchema, d: HistoryDialect, mark: string) {
    this.#table = table;
    this.#mark = mark;
    this.#sql = catchUpSql(table, d) as NonNullable<ReturnType<typeof catchUpSql>>;
  }

  /**
   * Reads the mark and catches up with what a killed process left. A history
   * new to the table starts at its newest row: older rows open versions when
   * they are next exported. Call committed() once the transaction commits.
   */
  static async open(table: TableSchema, d: HistoryDialect, db: HistoryDb): Promise<HistoryCatchUp> {
    const stream = catchUpStream(table);
    const saved = Mark.safeParse(await db.readState(stream));
    const h = new HistoryCatchUp(
      table,
      d,
      saved.success ? saved.data.mergedThrough : new Date(0).toISOString(),
    );
    const { last } = await db.first(h.#sql.pending, [h.#mark]);
    if (saved.success && last === null) return h;
    if (saved.success) await h.#catchUp(db);
    const mark = last ?? h.#mark;
    await db.writeState(stream, { mergedThrough: mark }, "catch-up", new Date());
    h.#next = mark;
    return h;
  }

  /** The mark: the sink's commits must be later, or their rows would pass for seen. */
  get mark(): Date {
    return new Date(this.#next ?? this.#mark);
  }

  /** Rows committed since the mark. */
  get unseen(): number {
    return this.#unseen.size;
  }

  /** Whether a commit of these keys would overwrite a row the history has not seen. */
  overwrites(keys: readonly string[]): boolean {
    return this.#unseen.size > 0 && keys.some((k) => this.#unseen.has(k));
  }

  /** A commit of the rows of these keys committed. */
  wrote(keys: readonly string[]): void {
    for (const k of keys) this.#unseen.add(k);
  }

  /** Brings the history up to the commit at `through`, the last one. Call committed() once it commits. */
  async catchUp(db: HistoryDb, through: Date, runId: string): Promise<void> {
    await this.#catchUp(db);
    const mark = through.toISOString();
    await db.writeState(catchUpStream(this.#table), { mergedThrough: mark }, runId, through);
    this.#next = mark;
  }

  async #catchUp(db: HistoryDb): Promise<void> {
    const params = [this.#mark];
    await db.run(this.#sql.fill, params);
    if ((await db.first(this.#sql.changed, params)).n > 0) await db.run(this.#sql.close, params);
    await db.run(this.#sql.open, params);
    await db.run(this.#sql.clear);
  }

  /** The transaction that caught up committed. */
  committed(): void {
    if (this.#next === undefined) return;
    this.#mark = this.#next;
    this.#unseen.clear();
    this.#next = undefined;
  }

  /** It rolled back: the mark stays. */
  rolledBack(): void {
    this.#next = undefined;
  }
}

import { hash as digest } from "node:crypto";
import { SinkError } from "../../errors/index.ts";
import type { Row, TableSchema } from "../types.ts";
import { jsonText, toDate } from "../values.ts";
import { historyTable } from "./history-spec.ts";

/**
 * The current version of one entity, as far as the history files tell: 56
 * bits of its hash, and where its row is (a history part and the line in
 * it). Its values stay in the file: this map holds every entity of the
 * table for the whole export, and on an 800,000-row first export holding
 * them as text took the CLI to 713 MB, with 12.8 s more garbage collection
 * than the export without history
 * (docs/engineering/performance-log.md).
 */
interface Current {
  hi: number;
  lo: number;
  part: number;
  line: number;
  /** The run that last wrote the entity through this sink (an index of #runs); -1 before. */
  run: number;
}

/** A current version about to be closed, and its entity's key. */
interface Ending {
  key: string;
  at: Current;
}

/** The lines of a history part (its NDJSON, as the manifest names it), blank lines left out. */
export type PartLines = (ndjson: string) => AsyncIterable<string>;

/** 28 bits each (small integers), from the hex MD5 a version row carries; 56 bits tell versions of one entity apart. */
function hashBits(hex: string): { hi: number; lo: number } {
  return { hi: hexBits(hex, 0), lo: hexBits(hex, 7) };
}

function hexBits(hex: string, from: number): number {
  return Number.parseInt(hex.slice(from, from + 7), 16);
}

/**
 * History in a file warehouse. Files are never rewritten, so the history is
 * an append-only log: each commit's part holds the versions it opened and,
 * for each version it ended (a change, or the entity found gone by a full
 * refresh), that version again with `valid_to` and `is_current` false. The
 * newest row per key and `valid_from` is the version as it stands. Where
 * the current version of every entity is, and its hash, are kept in
 * memory, read once from the parts the manifest lists; a version's row is
 * read back from its part when it is closed.
 */
export class FileHistory {
  readonly table: TableSchema;
  readonly #base: TableSchema;
  readonly #lines: PartLines;
  readonly #current = new Map<string, Current>();
  readonly #parts: string[] = [];
  readonly #partIndex = new Map<string, number>();
  readonly #runs: string[] = [];

  constructor(base: TableSchema, lines: PartLines) {
    this.#base = base;
    this.#lines = lines;
    this.table = historyTable(base);
  }

  get #key(): string {
    return this.table.primaryKey[0] as string;
  }

  #part(ndjson: string): number {
    let i = this.#partIndex.get(ndjson);
    if (i === undefined) {
      i = this.#parts.push(ndjson) - 1;
      this.#partIndex.set(ndjson, i);
    }
    return i;
  }

  /** Reads a history part the manifest lists; parts are read oldest first. */
  async load(ndjson: string): Promise<void> {
    const part = this.#part(ndjson);
    let line = 0;
    for await (const text of this.#lines(ndjson))
      this.#take(JSON.parse(text) as Record<string, unknown>, part, line++);
  }

  #take(row: Record<string, unknown>, part: number, line: number): void {
    const key = String(row[this.#key]);
    if (row.is_current === false) this.#current.delete(key);
    else {
      const hex = String(row.row_hash);
      this.#current.set(key, { hi: hexBits(hex, 0), lo: hexBits(hex, 7), part, line, run: -1 });
    }
  }

  get #tracked(): readonly string[] {
    return this.#base.history?.tracked ?? [];
  }

  /**
   * The versions `rows` open, those whose tracked columns differ from their
   * entity's current version, each after the row that closes the version it
   * ends.
   */
  async opened(rows: readonly Row[], now: Date, runId: string): Promise<Record<string, unknown>[]> {
    const tracked = this.#tracked;
    const types = new Map(this.#base.columns.map((c) => [c.name, c.type]));
    const at = now.toISOString();
    const opening: Record<string, unknown>[] = [];
    const ending: Ending[] = [];
    for (const row of rows) {
      const values = tracked.map((c) => plain(types.get(c), row[c]));
      const hash = digest("md5", jsonText(values), "hex");
      const key = String(row[this.#key]);
      const current = this.#current.get(key);
      if (current) {
        const { hi, lo } = hashBits(hash);
        if (current.hi === hi && current.lo === lo) continue;
        ending.push({ key, at: current });
      }
      const version: Record<string, unknown> = { [this.#key]: row[this.#key] };
      tracked.forEach((c, i) => {
        version[c] = values[i];
      });
      opening.push(
        Object.assign(version, {
          row_hash: hash,
          valid_from: at,
          valid_to: null,
          is_current: true,
          opened_by_run: runId,
          closed_by_run: null,
        }),
      );
    }
    if (ending.length === 0) return opening;
    const closing = await this.#closing(ending, at, runId);
    const byKey = new Map(closing.map((c) => [String(c[this.#key]), c]));
    return opening.flatMap((v) => {
      const c = byKey.get(String(v[this.#key]));
      return c ? [c, v] : [v];
    });
  }

  /** Closing rows for the entities of `keys` that still have a current version. */
  async closed(keys: Iterable<string>, now: Date, runId: string): Promise<Record<string, unknown>[]> {
    const ending: Ending[] = [];
    for (const key of keys) {
      const c = this.#current.get(key);
      if (c) ending.push({ key, at: c });
    }
    return this.#closing(ending, now.toISOString(), runId);
  }

  /**
   * The versions `ending` names, read back from their parts, again closed:
   * same key and valid_from. A row that is not the version it should be (a
   * part rewritten by `forget` while this ran) fails the commit, which a
   * new run, reading the parts afresh, does not meet.
   */
  async #closing(ending: readonly Ending[], at: string, runId: string): Promise<Record<string, unknown>[]> {
    return closedRows(await this.#readBack(ending), at, runId);
  }

  /** The rows of the versions `ending` names, in its order, each checked to be the version it should be. */
  async #readBack(ending: readonly Ending[]): Promise<Record<string, unknown>[]> {
    const wanted = new Map<number, Set<number>>();
    for (const { at: c } of ending) wanted.set(c.part, (wanted.get(c.part) ?? new Set()).add(c.line));
    const rows = new Map<string, Record<string, unknown>>();
    for (const [part, lines] of wanted) {
      let line = 0;
      for await (const text of this.#lines(this.#parts[part] as string)) {
        if (lines.has(line)) rows.set(`${part}:${line}`, JSON.parse(text) as Record<string, unknown>);
        line++;
      }
    }
    return ending.map(({ key, at: c }) => {
      const row = rows.get(`${c.part}:${c.line}`);
      const bits = row ? hashBits(String(row.row_hash)) : undefined;
      if (!row || String(row[this.#key]) !== key || bits?.hi !== c.hi || bits.lo !== c.lo) {
        throw new SinkError(
          `${this.table.name}: the current version of one entity is no longer at line ${c.line + 1} of ${this.#parts[c.part]} (was the file rewritten during the export?); run the export again`,
          { retryable: false },
        );
      }
      return row;
    });
  }

  /**
   * Closing rows for what a full refresh found gone: the current versions
   * within `scope` whose entity `kept` does not keep, given the run that
   * last wrote it through this sink, if any. A version's tracked values are
   * its entity's newest row's, so no part of the table is read; for a
   * scope this tracks (`tracks`).
   */
  async closeGone(
    scope: Readonly<Record<string, string>>,
    kept: (key: string, run: string | undefined) => boolean,
    now: Date,
    runId: string,
  ): Promise<Record<string, unknown>[]> {
    const columns = Object.keys(scope);
    const ending: Ending[] = [];
    for (const [key, c] of this.#current) {
      if (!kept(key, c.run < 0 ? undefined : this.#runs[c.run])) ending.push({ key, at: c });
    }
    const inScope = (await this.#readBack(ending)).filter((row) => columns.every((c) => row[c] === scope[c]));
    return closedRows(inScope, now.toISOString(), runId);
  }

  /** Whether every column of a full refresh's `scope` is the key or tracked: closeGone can find its gone. */
  tracks(scope: Readonly<Record<string, string>>): boolean {
    return Object.keys(scope).every((c) => c === this.#key || this.#tracked.includes(c));
  }

  /** Once a commit is in the manifest: the entities of its `rows` were last written by `runId`. */
  wrote(rows: readonly Row[], runId: string): void {
    let run = this.#runs.lastIndexOf(runId);
    if (run < 0) run = this.#runs.push(runId) - 1;
    for (const row of rows) {
      const c = this.#current.get(String(row[this.#key]));
      if (c) c.run = run;
    }
  }

  /** Once the commit is in the manifest: the rows of its history part (`ndjson`) become the current versions. */
  apply(ndjson: string, rows: readonly Record<string, unknown>[]): void {
    const part = this.#part(ndjson);
    rows.forEach((row, line) => {
      this.#take(row, part, line);
    });
  }
}

/** Versions read back, closed at `at` by `runId`: same key and valid_from. */
function closedRows(
  rows: readonly Record<string, unknown>[],
  at: string,
  runId: string,
): Record<string, unknown>[] {
  return rows.map((row) => ({ ...row, valid_to: at, is_current: false, closed_by_run: runId }));
}

function plain(type: string | undefined, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type === "timestamp") return toDate(v, "tracked").toISOString();
  if (typeof v === "bigint") return Number(v);
  return v;
}

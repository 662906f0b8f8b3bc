import { createHash } from "node:crypto";
import type { Row, TableSchema } from "../types.ts";
import { jsonText, toDate } from "../values.ts";
import { historyTable } from "./history-spec.ts";

/**
 * The current version of one entity, as far as the history files tell: its
 * tracked values as the JSON text its hash was made of, not a row object,
 * which cost several times more: the map holds every entity of the table
 * for the whole export.
 */
interface Current {
  key: unknown;
  hash: string;
  values: string;
  validFrom: string;
  openedBy: unknown;
}

/**
 * History in a file warehouse. Files are never rewritten, so the history is
 * an append-only log: each commit's part holds the versions it opened and,
 * for each version it ended (a change, or the entity found gone by a full
 * refresh), that version again with `valid_to` and `is_current` false. The
 * newest row per key and `valid_from` is the version as it stands. The
 * current version of every entity is kept in memory (its hash and tracked
 * values as text), read once from the parts the manifest lists.
 */
export class FileHistory {
  readonly table: TableSchema;
  readonly #base: TableSchema;
  readonly #current = new Map<string, Current>();

  constructor(base: TableSchema) {
    this.#base = base;
    this.table = historyTable(base);
  }

  get #key(): string {
    return this.table.primaryKey[0] as string;
  }

  /** Replays one row of a history part the manifest lists, oldest first. */
  replay(row: Record<string, unknown>): void {
    const key = String(row[this.#key]);
    if (row.is_current === false) {
      this.#current.delete(key);
      return;
    }
    const values = jsonText(this.#tracked.map((c) => row[c] ?? null));
    this.#current.set(key, {
      key: row[this.#key],
      hash: String(row.row_hash),
      values,
      validFrom: String(row.valid_from),
      openedBy: row.opened_by_run ?? null,
    });
  }

  get #tracked(): readonly string[] {
    return this.#base.history?.tracked ?? [];
  }

  /** The versions `rows` open: those whose tracked columns differ from their entity's current version. */
  opened(rows: readonly Row[], now: Date, runId: string): Record<string, unknown>[] {
    const tracked = this.#tracked;
    const types = new Map(this.#base.columns.map((c) => [c.name, c.type]));
    const at = now.toISOString();
    const out: Record<string, unknown>[] = [];
    for (const row of rows) {
      const values = tracked.map((c) => plain(types.get(c), row[c]));
      const hash = createHash("md5").update(jsonText(values)).digest("hex");
      const key = String(row[this.#key]);
      const current = this.#current.get(key);
      if (current?.hash === hash) continue;
      if (current) out.push(this.#closing(current, at, runId));
      const version: Record<string, unknown> = { [this.#key]: row[this.#key] };
      tracked.forEach((c, i) => {
        version[c] = values[i];
      });
      Object.assign(version, {
        row_hash: hash,
        valid_from: at,
        valid_to: null,
        is_current: true,
        opened_by_run: runId,
        closed_by_run: null,
      });
      out.push(version);
    }
    return out;
  }

  /** Closing rows for the entities of `keys` that still have a current version. */
  closed(keys: Iterable<string>, now: Date, runId: string): Record<string, unknown>[] {
    const at = now.toISOString();
    const out: Record<string, unknown>[] = [];
    for (const key of keys) {
      const c = this.#current.get(key);
      if (c) out.push(this.#closing(c, at, runId));
    }
    return out;
  }

  /** The current version again, closed: same key and valid_from, so it stands for the version from then on. */
  #closing(c: Current, at: string, runId: string): Record<string, unknown> {
    const row: Record<string, unknown> = { [this.#key]: c.key };
    const values = JSON.parse(c.values) as unknown[];
    this.#tracked.forEach((col, i) => {
      row[col] = values[i] ?? null;
    });
    return Object.assign(row, {
      row_hash: c.hash,
      valid_from: c.validFrom,
      valid_to: at,
      is_current: false,
      opened_by_run: c.openedBy,
      closed_by_run: runId,
    });
  }

  /** Once the commit is in the manifest: its versions become the current ones. */
  apply(rows: readonly Record<string, unknown>[]): void {
    for (const row of rows) this.replay(row);
  }
}

function plain(type: string | undefined, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type === "timestamp") return toDate(v, "tracked").toISOString();
  if (typeof v === "bigint") return Number(v);
  return v;
}

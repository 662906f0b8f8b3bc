import { createHash } from "node:crypto";
import type { Row, TableSchema } from "../types.ts";
import { jsonText, toDate } from "../values.ts";
import { historyTable } from "./history-spec.ts";

/** The current version of one entity, as far as the history files tell. */
interface Current {
  hash: string;
  validFrom: string;
  row: Record<string, unknown>;
}

/**
 * History in a file warehouse. Files are never rewritten, so the history is
 * an append-only log: each commit's part holds the versions it opened and,
 * for each version it ended (a change, or the entity found gone by a full
 * refresh), that version again with `valid_to` and `is_current` false. The
 * newest row per key and `valid_from` is the version as it stands. The
 * current hash of every entity is kept in memory, read once from the parts
 * the manifest lists.
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
    if (row.is_current === false) this.#current.delete(key);
    else this.#current.set(key, { hash: String(row.row_hash), validFrom: String(row.valid_from), row });
  }

  /** The versions `rows` open: those whose tracked columns differ from their entity's current version. */
  opened(rows: readonly Row[], now: Date, runId: string): Record<string, unknown>[] {
    const tracked = this.#base.history?.tracked ?? [];
    const types = new Map(this.#base.columns.map((c) => [c.name, c.type]));
    const out: Record<string, unknown>[] = [];
    for (const row of rows) {
      const values = tracked.map((c) => plain(types.get(c), row[c]));
      const hash = createHash("md5").update(jsonText(values)).digest("hex");
      const key = String(row[this.#key]);
      const current = this.#current.get(key);
      if (current?.hash === hash) continue;
      if (current) out.push(closing(current, now, runId));
      const version: Record<string, unknown> = { [this.#key]: row[this.#key] };
      tracked.forEach((c, i) => {
        version[c] = values[i];
      });
      Object.assign(version, {
        row_hash: hash,
        valid_from: now.toISOString(),
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
    const out: Record<string, unknown>[] = [];
    for (const key of keys) {
      const c = this.#current.get(key);
      if (c) out.push(closing(c, now, runId));
    }
    return out;
  }

  /** Once the commit is in the manifest: its versions become the current ones. */
  apply(rows: readonly Record<string, unknown>[]): void {
    for (const row of rows) this.replay(row);
  }
}

/** The current version again, closed: same key and valid_from, so it stands for the version from then on. */
function closing(c: Current, now: Date, runId: string): Record<string, unknown> {
  return { ...c.row, valid_to: now.toISOString(), is_current: false, closed_by_run: runId };
}

function plain(type: string | undefined, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type === "timestamp") return toDate(v, "tracked").toISOString();
  if (typeof v === "bigint") return Number(v);
  return v;
}

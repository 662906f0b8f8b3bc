import { createReadStream } from "node:fs";
import { mkdir, open, readFile, rename, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { createInterface } from "node:readline";
import { z } from "zod";
import { SinkError } from "../../errors/index.ts";
import { FileHistory } from "../history/file-history.ts";
import { historyTable } from "../history/history-spec.ts";
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
  plainValue,
  requireTable,
  toDate,
  toStringArray,
} from "../values.ts";
import type { FileSinkOptions } from "./file-sink-options.ts";
import { runsAsFormula } from "./formula-escape.ts";

/** Files hold personal data: readable by the owner only. */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
export const MANIFEST_FILE = "_manifest.ndjson";

const ManifestPart = z.object({
  table: z.string(),
  ndjson: z.string(),
  csv: z.string(),
  rows: z.number().int(),
});
const ManifestRun = z.object({
  runId: z.string(),
  resource: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  status: z.enum(["running", "succeeded", "failed", "interrupted"]),
  pages: z.number(),
  rows: z.number(),
  requests: z.number(),
  error: z.string().nullable(),
  kind: z.enum(["export", "import", "opt_out"]).optional(),
  job: z.string().nullable().optional(),
  fileHash: z.string().nullable().optional(),
  file: z.string().nullable().optional(),
  counts: z.record(z.string(), z.number()).nullable().optional(),
  failureCode: z.string().nullable().optional(),
});
/** One committed checkpoint: a line of the manifest. */
const ManifestEntry = z.object({
  seq: z.number().int(),
  runId: z.string(),
  committedAt: z.string(),
  part: ManifestPart.optional(),
  /** The versions the commit opened or closed in the part's history table (history/file-history.ts). */
  historyPart: ManifestPart.optional(),
  state: z.object({ stream: z.string(), value: z.unknown() }).optional(),
  run: ManifestRun.optional(),
});
type ManifestEntry = z.infer<typeof ManifestEntry>;

/**
 * A data lake directory: each commit writes one NDJSON and one CSV part under
 * `<table>/date=<YYYY-MM-DD>/run=<runId>/`, then appends a line to
 * `_manifest.ndjson`. The manifest is the commit log: a part it does not list
 * (left by a killed run) is not data. Full refreshes are snapshots: the
 * newest run's parts of a table are its current contents, so soft deletes
 * are left to readers.
 *
 * The CSV parts are meant for people, so a cell a spreadsheet would run as a
 * formula gets a leading `'` unless `escapeFormulas` is false (for machine
 * readers: `file:DIR?escapeFormulas=false`). The NDJSON parts keep every value
 * exactly, and are what the sink reads back.
 */
export class FileSink implements Sink {
  readonly kind = "file" as const;
  readonly displayUrl: string;
  readonly #dir: string;
  readonly #escapeFormulas: boolean;
  readonly #tables = new Map<string, TableSchema>();
  #entries: ManifestEntry[] | undefined;
  /** How many of #entries were in the manifest when it was read: those after are this sink's commits. */
  #read = 0;
  #queue: Promise<unknown> = Promise.resolve();
  /** History of the tables that keep it, read from their parts on first use. */
  readonly #histories = new Map<string, FileHistory>();

  constructor(dir: string, options: Partial<FileSinkOptions> = {}) {
    this.#dir = dir;
    this.#escapeFormulas = options.escapeFormulas ?? true;
    this.displayUrl = this.#escapeFormulas ? `file:${dir}` : `file:${dir}?escapeFormulas=false`;
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  get #manifestPath(): string {
    return join(this.#dir, MANIFEST_FILE);
  }

  /** Reads the manifest once; a torn last line (killed mid-append) is cut off. */
  async #manifest(): Promise<ManifestEntry[]> {
    if (this.#entries) return this.#entries;
    const entries: ManifestEntry[] = [];
    let text = "";
    try {
      text = await readFile(this.#manifestPath, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    const kept: string[] = [];
    for (const line of text.split("\n")) {
      if (!line) break;
      try {
        entries.push(ManifestEntry.parse(JSON.parse(line)));
      } catch {
        break;
      }
      kept.push(line);
    }
    const clean = kept.length ? `${kept.join("\n")}\n` : "";
    if (clean !== text) {
      const tmp = `${this.#manifestPath}.tmp`;
      await writeFile(tmp, clean, { mode: FILE_MODE });
      await rename(tmp, this.#manifestPath);
    }
    this.#entries = entries;
    this.#read = entries.length;
    return entries;
  }

  prepare(tables: readonly TableSchema[]): Promise<void> {
    return this.#serial(async () => {
      try {
        await mkdir(this.#dir, { recursive: true, mode: DIR_MODE });
        await this.#manifest();
      } catch (err) {
        throw new SinkError(`cannot prepare the file warehouse at ${this.#dir}: ${errorText(err)}`, {
          cause: err,
        });
      }
      for (const t of tables) {
        this.#tables.set(t.name, t);
        // Readable like a table (readTable), each row a version keyed by the key and valid_from.
        if (t.history) this.#tables.set(t.history.table, historyTable(t));
      }
    });
  }

  /** The history of `table`, its parts replayed once. */
  async #history(table: TableSchema): Promise<FileHistory | undefined> {
    if (!table.history) return undefined;
    let h = this.#histories.get(table.name);
    if (h) return h;
    const history = new FileHistory(table, (part) => ndjsonLines(join(this.#dir, part)));
    for (const e of await this.#manifest()) {
      if (e.historyPart?.table === history.table.name) await history.load(e.historyPart.ndjson);
    }
    h = history;
    this.#histories.set(table.name, h);
    return h;
  }

  /**
   * Closing rows for the versions of what a full refresh found gone. From
   * the history's own map when it tracks the scope's columns: the runs that
   * wrote each entity are known for this sink's commits, and read from the
   * table's parts only for commits of the refresh's runs made before this
   * sink opened (a resumed refresh). Otherwise from the table's parts.
   */
  async #gone(
    history: FileHistory,
    table: TableSchema,
    sd: NonNullable<Commit["softDelete"]>,
    written: readonly Row[],
    now: Date,
    runId: string,
  ): Promise<Record<string, unknown>[]> {
    if (!history.tracks(sd.scope))
      return history.closed(await this.#goneKeys(table, sd, written), now, runId);
    const key = table.primaryKey[0] as string;
    const keep = new Set(sd.keepRunIds);
    const seen = new Set(written.map((r) => String(r[key])));
    const before = await this.#runsBefore(table, keep);
    const kept = (k: string, run: string | undefined) => seen.has(k) || keep.has(run ?? before.get(k) ?? "");
    return history.closeGone(sd.scope, kept, now, runId);
  }

  /**
   * Per key of `table`, the run of its newest row among the commits read
   * from the manifest, from the first that a run of `keep` made on: none
   * when no run of `keep` committed before this sink opened.
   */
  async #runsBefore(table: TableSchema, keep: ReadonlySet<string>): Promise<Map<string, string>> {
    const entries = (await this.#manifest()).slice(0, this.#read);
    const from = entries.findIndex((e) => e.part?.table === table.name && keep.has(e.runId));
    const runs = new Map<string, string>();
    if (from < 0) return runs;
    const key = table.primaryKey[0] as string;
    for (const e of entries.slice(from)) {
      if (e.part?.table !== table.name) continue;
      for await (const row of ndjsonRows(join(this.#dir, e.part.ndjson))) runs.set(String(row[key]), e.runId);
    }
    return runs;
  }

  /** Keys of a full refresh's scope that none of its runs wrote: what it found gone (the files keep their rows). */
  async #goneKeys(
    table: TableSchema,
    sd: NonNullable<Commit["softDelete"]>,
    written: readonly Row[],
  ): Promise<string[]> {
    const key = table.primaryKey[0] as string;
    const keep = new Set(sd.keepRunIds);
    const seen = new Set(written.map((r) => String(r[key])));
    const gone: string[] = [];
    for (const [k, run] of await this.#newestRuns(table, sd.scope)) {
      if (run === null || keep.has(run) || seen.has(k)) continue;
      gone.push(k);
    }
    return gone;
  }

  /**
   * Per key of `table`, the run that wrote its newest row, or null when
   * that row is outside `scope`: what #goneKeys needs, without holding the
   * rows. Holding every current row (#currentRows) took an 800,000-row
   * full refresh with history to 1.4 GB at its last commit.
   */
  async #newestRuns(
    table: TableSchema,
    scope: Readonly<Record<string, string>>,
  ): Promise<Map<string, string | null>> {
    // One string per run, not one per row: a refresh's rows share a handful of runs.
    const runIds = new Map<string, string>();
    return this.#newest(table, (row) => {
      if (Object.entries(scope).some(([c, v]) => row[c] !== v)) return null;
      const run = String(row._run_id);
      if (!runIds.has(run)) runIds.set(run, run);
      return runIds.get(run) as string;
    });
  }

  /** `filed`: the rows' values are file values already (history versions), text arrays aside. */
  async #writePart(
    table: string,
    columns: readonly ColumnSchema[],
    rows: readonly Row[],
    seq: number,
    runId: string,
    now: Date,
    filed = false,
  ): Promise<z.infer<typeof ManifestPart>> {
    const base = join(
      this.#dir,
      table,
      `date=${now.toISOString().slice(0, 10)}`,
      `run=${runId}`,
      `part-${String(seq).padStart(6, "0")}`,
    );
    await mkdir(dirname(base), { recursive: true, mode: DIR_MODE });
    // Each row's file values are made once, for both formats (the CSV line made them again).
    const ndjson: string[] = [];
    const csv = [columns.map((c) => c.name).join(",")];
    for (const r of rows) {
      const values = fileRow(columns, r, runId, now, filed);
      ndjson.push(jsonText(values));
      csv.push(csvLine(columns, values, this.#escapeFormulas));
    }
    await writeDurably(`${base}.ndjson`, `${ndjson.join("\n")}\n`);
    await writeDurably(`${base}.csv`, `${csv.join("\n")}\n`);
    return {
      table,
      ndjson: relative(this.#dir, `${base}.ndjson`),
      csv: relative(this.#dir, `${base}.csv`),
      rows: rows.length,
    };
  }

  readState(stream: string): Promise<unknown> {
    return this.#serial(async () => {
      let value: unknown;
      for (const e of await this.#manifest()) {
        if (e.state?.stream === stream) value = e.state.value ?? undefined;
      }
      return value;
    });
  }

  commit(commit: Commit): Promise<CommitResult> {
    return this.#serial(async () => {
      const entries = await this.#manifest();
      const now = new Date();
      const seq = (entries.at(-1)?.seq ?? 0) + 1;
      const entry: ManifestEntry = { seq, runId: commit.runId, committedAt: now.toISOString() };
      let upserted = 0;
      let versions: Record<string, unknown>[] = [];
      let history: FileHistory | undefined;
      try {
        let rows: readonly Row[] = [];
        if (commit.upsert && commit.upsert.rows.length > 0) {
          const table = requireTable(this.#tables, commit.upsert.table);
          rows = lastRowPerKey(table, commit.upsert.rows);
          entry.part = await this.#writePart(table.name, allColumns(table), rows, seq, commit.runId, now);
          upserted = rows.length;
          history = await this.#history(table);
          versions = (await history?.opened(rows, now, commit.runId)) ?? [];
        }
        const wroteTo = history;
        const sd = commit.softDelete;
        const sdTable = sd ? requireTable(this.#tables, sd.table) : undefined;
        if (sd && sdTable?.history) {
          history = await this.#history(sdTable);
          if (history)
            versions = [...versions, ...(await this.#gone(history, sdTable, sd, rows, now, commit.runId))];
        }
        if (history && versions.length > 0) {
          const t = history.table;
          entry.historyPart = await this.#writePart(
            t.name,
            t.columns,
            versions,
            seq,
            commit.runId,
            now,
            true,
          );
        }
        if (commit.state) entry.state = { stream: commit.state.stream, value: commit.state.value };
        if (commit.run) {
          const r = commit.run;
          entry.run = {
            ...r,
            startedAt: r.startedAt.toISOString(),
            finishedAt: r.finishedAt?.toISOString() ?? null,
          };
        }
        // The append is the commit point: parts written before it but not listed are ignored.
        const fh = await open(this.#manifestPath, "a", FILE_MODE);
        try {
          await fh.appendFile(`${jsonText(entry)}\n`);
          await fh.sync();
        } finally {
          await fh.close();
        }
        entries.push(entry);
        if (entry.historyPart) history?.apply(entry.historyPart.ndjson, versions);
        wroteTo?.wrote(rows, commit.runId);
        return { upserted, deleted: 0 };
      } catch (err) {
        if (err instanceof SinkError) throw err;
        throw new SinkError(`file warehouse commit failed: ${errorText(err)}`, { cause: err });
      }
    });
  }

  /** The current rows of a table: every listed part replayed, the newest row per key winning. */
  #currentRows(table: TableSchema): Promise<Map<string, Record<string, unknown>>> {
    return this.#newest(table, (row) => row);
  }

  /** Every listed part of `table` replayed, oldest first: `pick` of the newest row per key. */
  async #newest<T>(table: TableSchema, pick: (row: Record<string, unknown>) => T): Promise<Map<string, T>> {
    const newest = new Map<string, T>();
    for (const e of await this.#manifest()) {
      const part =
        e.part?.table === table.name
          ? e.part
          : e.historyPart?.table === table.name
            ? e.historyPart
            : undefined;
      if (!part) continue;
      for await (const row of ndjsonRows(join(this.#dir, part.ndjson))) {
        newest.set(table.primaryKey.map((c) => String(row[c])).join("\u0000"), pick(row));
      }
    }
    return newest;
  }

  readKeys(query: KeyQuery): Promise<string[]> {
    return this.#serial(async () => {
      const table = requireTable(this.#tables, query.table);
      const notIn = new Set(query.exclude?.notIn ?? []);
      const keys = new Set<string>();
      for (const row of (await this.#currentRows(table)).values()) {
        const key = row[query.column];
        if (key === null || key === undefined) continue;
        if (query.exclude) {
          const other = row[query.exclude.column];
          if (other !== null && other !== undefined && notIn.has(String(other))) continue;
        }
        keys.add(String(key));
      }
      return [...keys].sort();
    });
  }

  readTable(name: string): Promise<Record<string, unknown>[]> {
    return this.#serial(async () => {
      const table = requireTable(this.#tables, name);
      const byName = new Map(allColumns(table).map((c) => [c.name, c]));
      const rows = [...(await this.#currentRows(table)).entries()].sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0,
      );
      return rows.map(([, r]) =>
        Object.fromEntries(Object.entries(r).map(([k, v]) => [k, plainValue(byName.get(k), v)])),
      );
    });
  }

  readRuns(): Promise<SyncRunRecord[]> {
    return this.#serial(async () => {
      const runs = new Map<string, SyncRunRecord>();
      for (const e of await this.#manifest()) {
        if (!e.run) continue;
        runs.set(`${e.run.runId}\u0000${e.run.resource}`, {
          ...e.run,
          startedAt: new Date(e.run.startedAt),
          finishedAt: e.run.finishedAt === null ? null : new Date(e.run.finishedAt),
        });
      }
      return [...runs.values()].sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
    });
  }

  async close(): Promise<void> {
    await this.#queue;
  }
}

/** The lines of an NDJSON part, blank ones left out; none when the file is missing. */
async function* ndjsonLines(path: string): AsyncGenerator<string> {
  if (!(await stat(path).catch(() => undefined))) return;
  const lines = createInterface({
    input: createReadStream(path, "utf8"),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  for await (const line of lines) if (line) yield line;
}

/** The rows of an NDJSON part; none when the file is missing. */
async function* ndjsonRows(path: string): AsyncGenerator<Record<string, unknown>> {
  for await (const line of ndjsonLines(path)) yield JSON.parse(line) as Record<string, unknown>;
}

async function writeDurably(path: string, text: string): Promise<void> {
  const fh = await open(path, "w", FILE_MODE);
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function cellValue(col: ColumnSchema, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (col.type) {
    case "timestamp":
      return toDate(v, col.name).toISOString();
    case "text_array":
      return toStringArray(v, col.name);
    case "bigint":
      return typeof v === "bigint" ? Number(v) : v;
    default:
      return v;
  }
}

function fileRow(
  columns: readonly ColumnSchema[],
  row: Row,
  runId: string,
  syncedAt: Date,
  filed: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const col of columns) {
    if (col.name === "_synced_at") out[col.name] = syncedAt.toISOString();
    else if (col.name === "_run_id") out[col.name] = runId;
    // A history version holds file values (FileHistory's, or a row read back): each timestamp parsed
    // again would only print as it is. Text arrays still go through cellValue, which FileHistory skips.
    else if (filed && col.type !== "text_array") out[col.name] = row[col.name] ?? null;
    else out[col.name] = cellValue(col, row[col.name]);
  }
  return out;
}

function csvField(value: unknown, escapeFormulas: boolean): string {
  if (value === null || value === undefined) return "";
  let text = typeof value === "string" ? value : jsonText(value);
  if (escapeFormulas && runsAsFormula(text, value)) text = `'${text}`;
  return /[",\n\r]/.test(text) || text === "" ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A CSV line of a row's file values (fileRow). */
function csvLine(
  columns: readonly ColumnSchema[],
  values: Record<string, unknown>,
  escapeFormulas: boolean,
): string {
  return columns.map((c) => csvField(values[c.name], escapeFormulas)).join(",");
}

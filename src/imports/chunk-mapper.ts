import type { ImportJobDefinition } from "../config/import-job.ts";
import { planColumns } from "./column-plan.ts";
import { dedupeKey, KeyIndex } from "./dedupe.ts";
import { isShortRow, mapRow } from "./map-row.ts";
import { planRow, type RowPlan } from "./row-plan.ts";
import type { DroppedValue, RowProblem } from "./row-problem.ts";
import { stampInto } from "./sent-stamps.ts";

/** A mapped row's flags (MappedChunk.flags). */
export const ROW_REJECTED = 1;
export const ROW_OPT_IN_HELD_BACK = 2;
export const ROW_DROPPED_VALUES = 4;
export const ROW_OPTED_OUT = 8;
/** The row had fewer cells than the header: the missing ones were read as empty (map-row.ts). */
export const ROW_SHORT = 16;

/**
 * Rows of the file as mapping left them, in file order: plain data (a few
 * strings and typed arrays), so that a chunk mapped on the parse thread
 * crosses to the main thread without a clone per row or per cell.
 */
export interface MappedChunk {
  /** Bytes of the file read by the time this chunk was mapped (for progress). */
  bytesRead: number;
  /** The header row's cells (the first data row's when the file has none), in the chunk that met it. */
  header?: string[];
  /** Set when the column plan failed on that header: the rows after it were not mapped. */
  planFailed?: string;
  blankRows: number;
  /** Each mapped row's number in the file and its flags (ROW_*). */
  rows: Int32Array;
  flags: Uint8Array;
  /** The valid rows' people as JSON, one after another, and where each ends. */
  people: string;
  peopleEnds: Int32Array;
  /** The valid rows' identifier values, likewise. */
  keys: string;
  keyEnds: Int32Array;
  /** The valid rows' populations: an index into populationNames, -1 for none. */
  populations: Int32Array;
  populationNames: string[];
  /** The sequence number (among the file's valid rows) of this chunk's first valid row. */
  firstSeq: number;
  /** Each valid row's previous valid row of the same person (population and identifier), or -1. */
  prevs: Int32Array;
  /** The valid rows' change-only stamps (sent-stamps.ts), four words each, when asked for; else empty. */
  stamps: Uint32Array;
  /** For each valid row flagged ROW_DROPPED_VALUES, in order: the values left out. */
  dropped: DroppedValue[][];
  /** For each rejected row, in order: why, and its cells for the rejects file. */
  rejects: { issues: RowProblem[]; cells: string[] }[];
}

/** The shape of read-records' chunks, restated so that this module needs nothing from it. */
export interface CellChunk {
  firstRow: number;
  length: number;
  bytesRead: number;
  cells(i: number): string[];
}

export function isBlank(cells: readonly string[]): boolean {
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i] as string;
    // Most cells start with a visible character: no need to trim them.
    if (c.length > 0 && (c.charCodeAt(0) > 32 || c.trim() !== "")) return false;
  }
  return true;
}

/** The column headers a header row (or, without one, the first row) gives. */
export function headersOf(def: { source: { header: boolean } }, cells: readonly string[]): string[] {
  return def.source.header ? [...cells] : cells.map((_c, k) => `column${k + 1}`);
}

/**
 * A chunk being mapped. Its per-row numbers go straight into typed arrays
 * sized for the rows it may take: arrays grown by push left garbage for each
 * row, copied to typed arrays in the end all the same.
 */
class ChunkBuilder {
  /** Rows taken, and valid rows among them: how much of the arrays below is filled. */
  rowCount = 0;
  validCount = 0;
  readonly rows: Int32Array;
  readonly flags: Uint8Array;
  people = "";
  readonly peopleEnds: Int32Array;
  keys = "";
  readonly keyEnds: Int32Array;
  readonly populations: Int32Array;
  populationNames: string[] = [];
  readonly prevs: Int32Array;
  readonly stamps: Uint32Array;
  #populationIndex = new Map<string, number>();
  dropped: DroppedValue[][] = [];
  rejects: { issues: RowProblem[]; cells: string[] }[] = [];
  blankRows = 0;
  header: string[] | undefined;
  planFailed: string | undefined;

  readonly firstSeq: number;

  constructor(firstSeq: number, rowsAtMost: number, stamps: boolean) {
    this.firstSeq = firstSeq;
    this.rows = new Int32Array(rowsAtMost);
    this.flags = new Uint8Array(rowsAtMost);
    this.peopleEnds = new Int32Array(rowsAtMost);
    this.keyEnds = new Int32Array(rowsAtMost);
    this.populations = new Int32Array(rowsAtMost);
    this.prevs = new Int32Array(rowsAtMost);
    this.stamps = new Uint32Array(stamps ? rowsAtMost * 4 : 0);
  }

  addRow(row: number, flags: number): void {
    this.rows[this.rowCount] = row;
    this.flags[this.rowCount++] = flags;
  }

  population(name: string | null): number {
    if (name === null) return -1;
    let i = this.#populationIndex.get(name);
    if (i === undefined) {
      i = this.populationNames.push(name) - 1;
      this.#populationIndex.set(name, i);
    }
    return i;
  }

  /**
   * Stamps the chunk's valid rows (stampInto), once their people are all in.
   * JSON.stringify gives a string in pieces: hashing each row's as it came
   * copied it into a flat string, then the chunk's people were copied flat
   * again when posted or read. Slices of the chunk's people, flattened once
   * here, are hashed without the first copy.
   */
  #stampAll(): void {
    let from = 0;
    let keyFrom = 0;
    for (let v = 0; v < this.validCount; v++) {
      const to = this.peopleEnds[v] as number;
      const keyTo = this.keyEnds[v] as number;
      const p = this.populations[v] as number;
      const population = p === -1 ? null : (this.populationNames[p] as string);
      stampInto(population, this.keys.slice(keyFrom, keyTo), this.people.slice(from, to), this.stamps, v * 4);
      from = to;
      keyFrom = keyTo;
    }
  }

  finish(bytesRead: number): MappedChunk {
    if (this.stamps.length > 0) this.#stampAll();
    const rows = this.rowCount;
    const valid = this.validCount;
    return {
      bytesRead,
      ...(this.header === undefined ? {} : { header: this.header }),
      ...(this.planFailed === undefined ? {} : { planFailed: this.planFailed }),
      blankRows: this.blankRows,
      rows: this.rows.slice(0, rows),
      flags: this.flags.slice(0, rows),
      people: this.people,
      peopleEnds: this.peopleEnds.slice(0, valid),
      keys: this.keys,
      keyEnds: this.keyEnds.slice(0, valid),
      populations: this.populations.slice(0, valid),
      populationNames: this.populationNames,
      firstSeq: this.firstSeq,
      prevs: this.prevs.slice(0, valid),
      stamps: this.stamps.length === 0 ? this.stamps : this.stamps.slice(0, valid * 4),
      dropped: this.dropped,
      rejects: this.rejects,
    };
  }
}

export interface ChunkMapperOptions {
  /** Chunks given back hold at most about this many characters of people, so that neither heap sees a large object. */
  maxChars?: number;
  /** Stamp every valid row for the change-only state, here rather than on the main thread. */
  stamps?: boolean;
  /** The file's size in bytes: the person index is sized for the whole file once its first rows tell how. */
  fileSize?: number;
}

/**
 * Bytes read before the person index is sized for the whole file: enough rows
 * for their average length to predict the rest (the reader's read-ahead, a
 * few tens of kilobytes, then errs by a few percent), early enough that
 * resizing moves only a few thousand keys.
 */
const ESTIMATE_AFTER_BYTES = 2 << 20;

/**
 * Maps a file's rows to people, chunk by chunk, in either thread: skips the
 * definition's `skipRows` and blank rows, plans the columns at the header,
 * then maps every row (map-row.ts).
 */
export class ChunkMapper {
  readonly #def: ImportJobDefinition;
  readonly #maxChars: number;
  readonly #stamps: boolean;
  readonly #fileSize: number | undefined;
  /** Each person's latest valid row, by (population, identifier): links a person's rows for the merge. */
  readonly #index = new KeyIndex();
  #seq = 0;
  #reserved = false;
  #skipped = 0;
  #plan: RowPlan | undefined;
  #failed = false;

  constructor(def: ImportJobDefinition, options: ChunkMapperOptions = {}) {
    this.#def = def;
    this.#maxChars = options.maxChars ?? Number.POSITIVE_INFINITY;
    this.#stamps = options.stamps ?? false;
    this.#fileSize = options.fileSize;
  }

  *map(chunk: CellChunk): Generator<MappedChunk> {
    const builder = (rowsAtMost: number) => new ChunkBuilder(this.#seq, rowsAtMost, this.#stamps);
    let out = builder(chunk.length);
    for (let i = 0; i < chunk.length && !this.#failed; i++) {
      const row = chunk.firstRow + i;
      const cells = chunk.cells(i);
      if (this.#plan === undefined) {
        if (this.#skipped < this.#def.source.skipRows) {
          this.#skipped++;
          continue;
        }
        if (isBlank(cells)) {
          out.blankRows++;
          continue;
        }
        out.header = [...cells];
        try {
          this.#plan = planRow(planColumns(headersOf(this.#def, cells), this.#def), this.#def);
        } catch (e) {
          // The main thread plans the same header again and throws the error itself, whole.
          out.planFailed = String((e as Error).message ?? e);
          this.#failed = true;
          break;
        }
        if (this.#def.source.header) continue;
      }
      if (isBlank(cells)) {
        out.blankRows++;
        continue;
      }
      const mapped = mapRow(this.#plan, cells, row);
      const short = isShortRow(this.#plan.width, cells) ? ROW_SHORT : 0;
      if (!mapped.ok) {
        out.addRow(row, ROW_REJECTED | short);
        out.rejects.push({ issues: mapped.issues, cells });
        continue;
      }
      let flags = short;
      if (mapped.optInHeldBack) flags |= ROW_OPT_IN_HELD_BACK;
      if (mapped.person.isOptedOut === true) flags |= ROW_OPTED_OUT;
      if (mapped.dropped !== undefined) {
        flags |= ROW_DROPPED_VALUES;
        out.dropped.push(mapped.dropped);
      }
      out.addRow(row, flags);
      const v = out.validCount++;
      out.people += JSON.stringify(mapped.person);
      out.peopleEnds[v] = out.people.length;
      out.keys += mapped.key;
      out.keyEnds[v] = out.keys.length;
      out.populations[v] = out.population(mapped.population);
      // (population, identifier): the service matches within the population, so the same email in two is two people.
      out.prevs[v] = this.#index.put(dedupeKey(mapped.population, mapped.key), this.#seq++);
      if (out.people.length >= this.#maxChars && i + 1 < chunk.length) {
        yield out.finish(chunk.bytesRead);
        out = builder(chunk.length - i - 1);
      }
    }
    const size = this.#fileSize;
    if (!this.#reserved && size !== undefined && chunk.bytesRead >= Math.min(ESTIMATE_AFTER_BYTES, size)) {
      // Rows so far (header and blanks included) over bytes so far, scaled to the file's size.
      this.#index.reserve(Math.ceil(((chunk.firstRow + chunk.length - 1) * size) / chunk.bytesRead));
      this.#reserved = true;
    }
    yield out.finish(chunk.bytesRead);
  }
}

/** The typed arrays of a chunk, to transfer rather than copy when it is posted. */
export function transferablesOf(m: MappedChunk): ArrayBuffer[] {
  return [m.rows, m.flags, m.peopleEnds, m.keyEnds, m.populations, m.prevs, m.stamps].map(
    (a) => a.buffer as ArrayBuffer,
  );
}

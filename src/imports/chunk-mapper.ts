import type { ImportJobDefinition } from "../config/import-job.ts";
import { planColumns } from "./column-plan.ts";
import { dedupeKey, KeyIndex } from "./dedupe.ts";
import { mapRow } from "./map-row.ts";
import type { DroppedValue } from "./mapped-row.ts";
import type { RowIssue } from "./row-issue.ts";
import { planRow, type RowPlan } from "./row-plan.ts";
import { stampInto } from "./sent-stamps.ts";

/** A mapped row's flags (MappedChunk.flags). */
export const ROW_REJECTED = 1;
export const ROW_OPT_IN_HELD_BACK = 2;
export const ROW_DROPPED_VALUES = 4;

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
  rejects: { issues: RowIssue[]; cells: string[] }[];
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
export function headersOf(def: ImportJobDefinition, cells: readonly string[]): string[] {
  return def.source.header ? [...cells] : cells.map((_c, k) => `column${k + 1}`);
}

class ChunkBuilder {
  rows: number[] = [];
  flags: number[] = [];
  people = "";
  peopleEnds: number[] = [];
  keys = "";
  keyEnds: number[] = [];
  populations: number[] = [];
  populationNames: string[] = [];
  prevs: number[] = [];
  stamps: Uint32Array;
  #populationIndex = new Map<string, number>();
  dropped: DroppedValue[][] = [];
  rejects: { issues: RowIssue[]; cells: string[] }[] = [];
  blankRows = 0;
  header: string[] | undefined;
  planFailed: string | undefined;

  readonly firstSeq: number;

  constructor(firstSeq: number, rowsAtMost: number, stamps: boolean) {
    this.firstSeq = firstSeq;
    this.stamps = new Uint32Array(stamps ? rowsAtMost * 4 : 0);
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

  finish(bytesRead: number): MappedChunk {
    return {
      bytesRead,
      ...(this.header === undefined ? {} : { header: this.header }),
      ...(this.planFailed === undefined ? {} : { planFailed: this.planFailed }),
      blankRows: this.blankRows,
      rows: Int32Array.from(this.rows),
      flags: Uint8Array.from(this.flags),
      people: this.people,
      peopleEnds: Int32Array.from(this.peopleEnds),
      keys: this.keys,
      keyEnds: Int32Array.from(this.keyEnds),
      populations: Int32Array.from(this.populations),
      populationNames: this.populationNames,
      firstSeq: this.firstSeq,
      prevs: Int32Array.from(this.prevs),
      stamps: this.stamps.length === 0 ? this.stamps : this.stamps.slice(0, this.peopleEnds.length * 4),
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
    const builder = () => new ChunkBuilder(this.#seq, chunk.length, this.#stamps);
    let out = builder();
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
      out.rows.push(row);
      if (!mapped.ok) {
        out.flags.push(ROW_REJECTED);
        out.rejects.push({ issues: mapped.issues, cells });
        continue;
      }
      let flags = 0;
      if (mapped.optInHeldBack) flags |= ROW_OPT_IN_HELD_BACK;
      if (mapped.dropped !== undefined) {
        flags |= ROW_DROPPED_VALUES;
        out.dropped.push(mapped.dropped);
      }
      out.flags.push(flags);
      const json = JSON.stringify(mapped.person);
      out.people += json;
      out.peopleEnds.push(out.people.length);
      out.keys += mapped.key;
      out.keyEnds.push(out.keys.length);
      out.populations.push(out.population(mapped.population));
      // (population, identifier): the service matches within the population, so the same email in two is two people.
      out.prevs.push(this.#index.put(dedupeKey(mapped.population, mapped.key), this.#seq++));
      if (this.#stamps) {
        stampInto(mapped.population, mapped.key, json, out.stamps, (out.peopleEnds.length - 1) * 4);
      }
      if (out.people.length >= this.#maxChars && i + 1 < chunk.length) {
        yield out.finish(chunk.bytesRead);
        out = builder();
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

import type { DroppedValue, RowProblem } from "./row-problem.ts";
import { stampInto } from "./sent-stamps.ts";

/*
 * How mapped rows cross from the parse thread to the main thread, packed and
 * unpacked here and nowhere else: a chunk is a few strings and typed arrays,
 * so that it crosses without a clone per row or per cell (cloning 12,000
 * small strings between heaps cost more than parsing them). The main thread
 * gets plain rows back (unpackChunk); nothing past this file sees the packing.
 */

const ROW_REJECTED = 1;
const ROW_OPT_IN_HELD_BACK = 2;
const ROW_DROPPED_VALUES = 4;
const ROW_OPTED_OUT = 8;
/** The row had fewer cells than the header: the missing ones were read as empty (map-row.ts). */
const ROW_SHORT = 16;

/** What the column plan says of the file's header, as plain data that crosses threads. */
export interface PlannedHeader {
  headers: string[];
  unmapped: string[];
  ignored: string[];
}

/** A chunk of mapped rows as it crosses threads. */
export interface MappedChunk {
  /** Bytes of the file read by the time this chunk was mapped (for progress). */
  bytesRead: number;
  /** The column plan of the header row, in the chunk that met it. */
  planned?: PlannedHeader;
  /** The header row's cells when the column plan refused them: the rows after it were not mapped. */
  refusedHeader?: string[];
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
  /** The valid rows' change-only stamps (sent-stamps.ts), four words each, when asked for; else empty. */
  stamps: Uint32Array;
  /** For each valid row flagged ROW_DROPPED_VALUES, in order: the values left out. */
  dropped: DroppedValue[][];
  /** For each rejected row, in order: why, and its cells for the rejects file. */
  rejects: { issues: RowProblem[]; cells: string[] }[];
}

/** A row that maps to a person. */
export interface ValidRow {
  valid: true;
  row: number;
  population: string | null;
  /** The person's JSON. */
  person: string;
  /** The identifier's value (identifier.ts, identifierKey). */
  key: string;
  /** The change-only stamp of the row's person, when stamps were asked for. */
  stamp: Uint32Array | undefined;
  dropped: DroppedValue[] | undefined;
  optInHeldBack: boolean;
  optedOut: boolean;
  short: boolean;
}

/** A row the mapping refused, with its cells for the rejects file. */
export interface RefusedRow {
  valid: false;
  row: number;
  issues: RowProblem[];
  cells: string[];
  short: boolean;
}

/** What the mapping of one row gives, as the builder takes it. */
export type RowMapping =
  | {
      ok: true;
      person: string;
      key: string;
      population: string | null;
      dropped?: DroppedValue[] | undefined;
      optInHeldBack?: boolean | undefined;
      optedOut: boolean;
    }
  | { ok: false; issues: RowProblem[]; cells: string[] };

/**
 * A chunk being packed. Its per-row numbers go straight into typed arrays
 * sized for the rows it may take: arrays grown by push left garbage for each
 * row, copied to typed arrays in the end all the same.
 */
export class ChunkBuilder {
  rowCount = 0;
  validCount = 0;
  readonly #rows: Int32Array;
  readonly #flags: Uint8Array;
  people = "";
  readonly #peopleEnds: Int32Array;
  #keys = "";
  readonly #keyEnds: Int32Array;
  readonly #populations: Int32Array;
  #populationNames: string[] = [];
  #populationIndex = new Map<string, number>();
  readonly #stamps: Uint32Array;
  #dropped: DroppedValue[][] = [];
  #rejects: { issues: RowProblem[]; cells: string[] }[] = [];
  blankRows = 0;
  planned: PlannedHeader | undefined;
  refusedHeader: string[] | undefined;

  constructor(rowsAtMost: number, stamps: boolean) {
    this.#rows = new Int32Array(rowsAtMost);
    this.#flags = new Uint8Array(rowsAtMost);
    this.#peopleEnds = new Int32Array(rowsAtMost);
    this.#keyEnds = new Int32Array(rowsAtMost);
    this.#populations = new Int32Array(rowsAtMost);
    this.#stamps = new Uint32Array(stamps ? rowsAtMost * 4 : 0);
  }

  add(row: number, short: boolean, m: RowMapping): void {
    let flags = short ? ROW_SHORT : 0;
    if (!m.ok) {
      this.#rejects.push({ issues: m.issues, cells: m.cells });
      flags |= ROW_REJECTED;
    } else {
      if (m.optInHeldBack) flags |= ROW_OPT_IN_HELD_BACK;
      if (m.optedOut) flags |= ROW_OPTED_OUT;
      if (m.dropped !== undefined) {
        flags |= ROW_DROPPED_VALUES;
        this.#dropped.push(m.dropped);
      }
      const v = this.validCount++;
      this.people += m.person;
      this.#peopleEnds[v] = this.people.length;
      this.#keys += m.key;
      this.#keyEnds[v] = this.#keys.length;
      this.#populations[v] = this.#population(m.population);
    }
    this.#rows[this.rowCount] = row;
    this.#flags[this.rowCount++] = flags;
  }

  #population(name: string | null): number {
    if (name === null) return -1;
    let i = this.#populationIndex.get(name);
    if (i === undefined) {
      i = this.#populationNames.push(name) - 1;
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
      const to = this.#peopleEnds[v] as number;
      const keyTo = this.#keyEnds[v] as number;
      const p = this.#populations[v] as number;
      const population = p === -1 ? null : (this.#populationNames[p] as string);
      stampInto(
        population,
        this.#keys.slice(keyFrom, keyTo),
        this.people.slice(from, to),
        this.#stamps,
        v * 4,
      );
      from = to;
      keyFrom = keyTo;
    }
  }

  finish(bytesRead: number): MappedChunk {
    if (this.#stamps.length > 0) this.#stampAll();
    const rows = this.rowCount;
    const valid = this.validCount;
    return {
      bytesRead,
      ...(this.planned === undefined ? {} : { planned: this.planned }),
      ...(this.refusedHeader === undefined ? {} : { refusedHeader: this.refusedHeader }),
      blankRows: this.blankRows,
      rows: this.#rows.slice(0, rows),
      flags: this.#flags.slice(0, rows),
      people: this.people,
      peopleEnds: this.#peopleEnds.slice(0, valid),
      keys: this.#keys,
      keyEnds: this.#keyEnds.slice(0, valid),
      populations: this.#populations.slice(0, valid),
      populationNames: this.#populationNames,
      stamps: this.#stamps.length === 0 ? this.#stamps : this.#stamps.slice(0, valid * 4),
      dropped: this.#dropped,
      rejects: this.#rejects,
    };
  }
}

/** The typed arrays of a chunk, to transfer rather than copy when it is posted. */
export function transferablesOf(m: MappedChunk): ArrayBuffer[] {
  return [m.rows, m.flags, m.peopleEnds, m.keyEnds, m.populations, m.stamps].map(
    (a) => a.buffer as ArrayBuffer,
  );
}

/** The chunk's rows, in file order, as plain values. */
export function* unpackChunk(m: MappedChunk): Generator<ValidRow | RefusedRow> {
  let valid = 0;
  let refused = 0;
  let dropped = 0;
  let personFrom = 0;
  let keyFrom = 0;
  for (let i = 0; i < m.rows.length; i++) {
    const row = m.rows[i] as number;
    const flags = m.flags[i] as number;
    const short = (flags & ROW_SHORT) !== 0;
    if (flags & ROW_REJECTED) {
      const { issues, cells } = m.rejects[refused++] as MappedChunk["rejects"][number];
      yield { valid: false, row, issues, cells, short };
      continue;
    }
    const v = valid++;
    const personTo = m.peopleEnds[v] as number;
    const keyTo = m.keyEnds[v] as number;
    const pop = m.populations[v] as number;
    yield {
      valid: true,
      row,
      population: pop < 0 ? null : (m.populationNames[pop] as string),
      person: m.people.slice(personFrom, personTo),
      key: m.keys.slice(keyFrom, keyTo),
      stamp: m.stamps.length === 0 ? undefined : m.stamps.subarray(v * 4, v * 4 + 4),
      dropped: flags & ROW_DROPPED_VALUES ? m.dropped[dropped++] : undefined,
      optInHeldBack: (flags & ROW_OPT_IN_HELD_BACK) !== 0,
      optedOut: (flags & ROW_OPTED_OUT) !== 0,
      short,
    };
    personFrom = personTo;
    keyFrom = keyTo;
  }
}

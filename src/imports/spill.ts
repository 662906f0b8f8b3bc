import { closeSync, openSync, readSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import type { MaybePromise } from "./maybe-promise.ts";

/**
 * The validated rows of a run, one line each (row number, population number,
 * person JSON), written in the first pass and read back in the second: later duplicates must be known before anything is
 * sent, and holding a file's rows in memory would not stay flat. The file is
 * private (0o600) because it holds personal data, and deleted at the end.
 */
export interface SpilledRow {
  row: number;
  population: string | null;
  /** JSON of the validated person. */
  person: string;
}

/** Consecutive spilled rows: row `firstSeq + i` is (rows[i], populations[i], persons[i]). */
export interface SpilledChunk {
  firstSeq: number;
  rows: number[];
  populations: (string | null)[];
  /** JSON of each validated person. */
  persons: string[];
}

const BUFFER_BYTES = 2 << 20;
const READ_BYTES = 64 * 1024;
/** Room before each read for the line the previous read ended inside; longer lines take a copy. */
const TAIL_ROOM = 16 * 1024;

export class SpillWriter {
  #fh: FileHandle;
  // Lines are encoded straight into one reused buffer: joining strings and
  // converting megabytes of them made more garbage than the rows themselves.
  #buf = Buffer.allocUnsafe(BUFFER_BYTES);
  #used = 0;
  #offset = 0;
  // Four bytes a row while the spill stays under 4 GiB, eight after.
  #offsets: Uint32Array | Float64Array = new Uint32Array(1024);
  #count = 0;
  // Populations by number: a run has a handful, and a number is cheaper to write and read back than JSON.
  #populations: (string | null)[] = [];
  #populationNumber = new Map<string | null, number>();

  private constructor(fh: FileHandle) {
    this.#fh = fh;
  }

  static async create(path: string): Promise<SpillWriter> {
    return new SpillWriter(await open(path, "wx", 0o600));
  }

  get count(): number {
    return this.#count;
  }

  /** The populations the lines' numbers stand for. */
  get populations(): readonly (string | null)[] {
    return this.#populations;
  }

  /** Adds a row; returns a promise to await only when the buffer had to be written out. */
  append(row: number, population: string | null, person: string): MaybePromise {
    let pop = this.#populationNumber.get(population);
    if (pop === undefined) {
      pop = this.#populations.push(population) - 1;
      this.#populationNumber.set(population, pop);
    }
    const line = `${row}\t${pop}\t${person}\n`;
    // UTF-8 takes at most three bytes per UTF-16 code unit.
    if (this.#used + line.length * 3 > this.#buf.length) return this.#flushThen(line);
    this.#put(line);
    return undefined;
  }

  #ensureRoom(): void {
    const wide = this.#offset + (this.#buf.length + (1 << 30)) > 0xffffffff;
    if (this.#count + 1 < this.#offsets.length && !(wide && this.#offsets instanceof Uint32Array)) return;
    const size = this.#count + 1 >= this.#offsets.length ? this.#offsets.length * 2 : this.#offsets.length;
    const grown = wide ? new Float64Array(size) : new Uint32Array(size);
    grown.set(this.#offsets);
    this.#offsets = grown;
  }

  #put(line: string): void {
    this.#ensureRoom();
    const bytes = this.#buf.write(line, this.#used, "utf8");
    this.#used += bytes;
    this.#offsets[this.#count] = this.#offset;
    this.#count++;
    this.#offset += bytes;
    this.#offsets[this.#count] = this.#offset;
  }

  async #flushThen(line: string): Promise<void> {
    await this.flush();
    if (line.length * 3 <= this.#buf.length) {
      this.#put(line);
      return;
    }
    // A line larger than the buffer (very long cells) goes out on its own.
    const data = Buffer.from(line, "utf8");
    this.#ensureRoom();
    this.#offsets[this.#count] = this.#offset;
    this.#count++;
    this.#offset += data.length;
    this.#offsets[this.#count] = this.#offset;
    await this.#fh.write(data);
  }

  async flush(): Promise<void> {
    if (this.#used === 0) return;
    const used = this.#used;
    this.#used = 0;
    await this.#fh.write(this.#buf, 0, used);
  }

  #closed = false;

  /** Finishes writing; the byte ranges of the lines go to the reader. */
  async close(): Promise<Uint32Array | Float64Array> {
    if (!this.#closed) {
      this.#closed = true;
      await this.flush();
      await this.#fh.close();
    }
    return this.#offsets.subarray(0, this.#count + 1);
  }
}

/** Reads the spill in order, and single lines out of order for merging duplicates. */
export class SpillReader {
  #path: string;
  #offsets: Uint32Array | Float64Array;
  #populations: readonly (string | null)[];
  #fd: number | undefined;

  constructor(path: string, offsets: Uint32Array | Float64Array, populations: readonly (string | null)[]) {
    this.#path = path;
    this.#offsets = offsets;
    this.#populations = populations;
  }

  /**
   * Every spilled row in order, a read's worth at a time. Reads are
   * asynchronous and one ahead: the next 64 KB is on its way while the rows of
   * this one are merged and sent, so the second pass never blocks the event
   * loop that carries the requests in flight. Two 64 KB buffers take turns:
   * each read's rows are decoded to strings before its buffer is read into
   * again, so no chunk of rows outlives a read (megabyte chunks, alive while a
   * batch was awaited, were promoted wholesale and made the pass mostly GC).
   */
  async *chunks(signal?: AbortSignal): AsyncGenerator<SpilledChunk> {
    const fh = await open(this.#path, "r");
    // Each buffer reads at TAIL_ROOM; the line the previous read ended inside
    // is copied just before, so a read and its tail are one slice without
    // allocating (a Buffer.concat per read made ~150 MB of garbage buffers at 1M rows).
    const buffers: [Buffer, Buffer] = [
      Buffer.allocUnsafe(TAIL_ROOM + READ_BYTES),
      Buffer.allocUnsafe(TAIL_ROOM + READ_BYTES),
    ];
    let turn: 0 | 1 = 0;
    let at = 0;
    let seq = 0;
    // The part of a line a read ended inside: its length, and a copy only when it outgrows TAIL_ROOM.
    let tailLength = 0;
    let longTail: Buffer | undefined;
    let pending: Promise<{ bytesRead: number }> = fh.read(buffers[0], TAIL_ROOM, READ_BYTES, 0);
    try {
      for (;;) {
        signal?.throwIfAborted();
        const { bytesRead } = await pending;
        if (bytesRead === 0) {
          if (tailLength > 0) throw new Error("the spill file ends inside a row");
          return;
        }
        const buffer = buffers[turn];
        const data =
          longTail === undefined
            ? buffer.subarray(TAIL_ROOM - tailLength, TAIL_ROOM + bytesRead)
            : Buffer.concat([longTail, buffer.subarray(TAIL_ROOM, TAIL_ROOM + bytesRead)]);
        at += bytesRead;
        turn = turn === 0 ? 1 : 0;
        pending = fh.read(buffers[turn], TAIL_ROOM, READ_BYTES, at);
        const chunk: SpilledChunk = { firstSeq: seq, rows: [], populations: [], persons: [] };
        let start = 0;
        for (let nl = data.indexOf(10, start); nl !== -1; nl = data.indexOf(10, start)) {
          let row = 0;
          let i = start;
          for (let ch = data[i] as number; ch !== 9; ch = data[++i] as number) row = row * 10 + (ch - 48);
          let pop = 0;
          for (let ch = data[++i] as number; ch !== 9; ch = data[++i] as number) pop = pop * 10 + (ch - 48);
          chunk.rows.push(row);
          chunk.populations.push(this.#populations[pop] as string | null);
          chunk.persons.push(data.toString("utf8", i + 1, nl));
          start = nl + 1;
        }
        seq += chunk.rows.length;
        // The next buffer's read lands at TAIL_ROOM, so the room before it is free to take this tail.
        tailLength = data.length - start;
        longTail = undefined;
        if (tailLength > TAIL_ROOM) longTail = Buffer.from(data.subarray(start));
        else if (tailLength > 0) data.copy(buffers[turn], TAIL_ROOM - tailLength, start);
        if (chunk.rows.length > 0) yield chunk;
      }
    } finally {
      // A read still under way must land before its file handle closes.
      await pending.catch(() => {});
      await fh.close();
    }
  }

  /** One row by sequence number, for merging duplicates. */
  row(seq: number): SpilledRow {
    const line = this.#line(seq);
    const a = line.indexOf("\t");
    const b = line.indexOf("\t", a + 1);
    return {
      row: Number(line.slice(0, a)),
      population: this.#populations[Number(line.slice(a + 1, b))] as string | null,
      person: line.slice(b + 1),
    };
  }

  /**
   * One line by sequence number. Read synchronously: the spill was just
   * written and sits in the page cache, so a positional read takes
   * microseconds, where a promise round trip through the thread pool made the
   * second pass wait ~0.1 ms per duplicate.
   */
  #line(seq: number): string {
    this.#fd ??= openSync(this.#path, "r");
    const start = this.#offsets[seq] as number;
    const end = this.#offsets[seq + 1] as number;
    const buf = Buffer.allocUnsafe(end - start);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(this.#fd, buf, got, buf.length - got, start + got);
      if (n === 0) throw new Error(`the spill file ended before row ${seq}`);
      got += n;
    }
    return buf.toString("utf8", 0, buf.length - 1);
  }

  async close(): Promise<void> {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

import { closeSync, openSync, readSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

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

const BUFFER_BYTES = 2 << 20;
const READ_BYTES = 64 * 1024;

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
  append(row: number, population: string | null, person: string): Promise<void> | undefined {
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
   * Calls `visit` with every spilled row in order, decoding only the person's
   * JSON; awaits it only when it returns a promise. The file is read 64 KB at
   * a time into one reused buffer: megabyte chunks of rows, alive while a batch
   * was awaited, were promoted wholesale and made the second pass mostly GC.
   */
  async each(
    signal: AbortSignal | undefined,
    visit: (seq: number, row: number, population: string | null, person: string) => Promise<void> | undefined,
  ): Promise<void> {
    this.#fd ??= openSync(this.#path, "r");
    let buf = Buffer.allocUnsafe(READ_BYTES);
    let have = 0;
    let at = 0;
    let seq = 0;
    for (;;) {
      signal?.throwIfAborted();
      if (have === buf.length) {
        // A line longer than the buffer (very long cells): grow it.
        const grown = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(grown, 0, 0, have);
        buf = grown;
      }
      // Synchronous, like line(): the spill is in the page cache, and a thread-pool round trip per
      // read left the second pass idle a third of the time.
      const got = readSync(this.#fd, buf, have, buf.length - have, at);
      if (got === 0) {
        if (have > 0) throw new Error("the spill file ends inside a row");
        return;
      }
      at += got;
      have += got;
      let start = 0;
      for (let nl = buf.indexOf(10, start); nl !== -1 && nl < have; nl = buf.indexOf(10, start)) {
        let row = 0;
        let i = start;
        for (let ch = buf[i] as number; ch !== 9; ch = buf[++i] as number) row = row * 10 + (ch - 48);
        let pop = 0;
        for (let ch = buf[++i] as number; ch !== 9; ch = buf[++i] as number) pop = pop * 10 + (ch - 48);
        start = nl + 1;
        const wait = visit(
          seq++,
          row,
          this.#populations[pop] as string | null,
          buf.toString("utf8", i + 1, nl),
        );
        if (wait) await wait;
      }
      buf.copy(buf, 0, start, have);
      have -= start;
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

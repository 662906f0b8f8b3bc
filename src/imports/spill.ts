import { closeSync, openSync, readSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { writeFailure } from "../errors/index.ts";
import type { MaybePromise } from "./maybe-promise.ts";

/**
 * Each validated person of a run as it stood after its row, one line per
 * valid row (the rows merged so far, a population number, the previous row of
 * the same key's hash, the person JSON),
 * read back by sequence number when a later row of the same person comes:
 * holding every person in memory until the end of the file would not stay
 * flat. The file is private (0o600) because it holds personal data, and
 * deleted at the end of the run.
 */
export interface SpilledRow {
  /** The file rows merged into this person so far, earliest first. */
  rows: number[];
  population: string | null;
  /**
   * The sequence number of the previous valid row whose key shares this one's
   * hash (KeyIndex, dedupe.ts), or -1: kept here rather than in an array of the
   * whole file's rows, since whoever follows the chain reads these lines anyway.
   */
  prev: number;
  /** JSON of the validated (and merged) person. */
  person: string;
}

const BUFFER_BYTES = 2 << 20;
/**
 * Lines per kept offset: the offset of every 16th line is kept, and a line
 * between is found by counting newlines from there (a line is one line of
 * JSON, which escapes its own). A row read back costs a few kilobytes more
 * scanned; the offsets cost a quarter of a byte a row instead of four.
 */
const OFFSET_EVERY = 16;
/** Bytes read from the file at a time while looking for a line. */
const READ_BYTES = 16 << 10;

export class SpillWriter {
  #path: string;
  #fh: FileHandle;
  // Lines are encoded straight into one reused buffer: joining strings and
  // converting megabytes of them made more garbage than the rows themselves.
  #buf = Buffer.allocUnsafe(BUFFER_BYTES);
  #used = 0;
  /** File offset of the buffer's first byte: lines from here on are still in memory. */
  #bufferAt = 0;
  #offset = 0;
  // The start of every OFFSET_EVERY-th line: four bytes each while the spill stays under 4 GiB, eight after.
  #offsets: Uint32Array | Float64Array = new Uint32Array(1024);
  #count = 0;
  // Populations by number: a run has a handful, and a number is cheaper to write and read back than JSON.
  #populations: (string | null)[] = [];
  #populationNumber = new Map<string | null, number>();
  #readFd: number | undefined;

  /** The setting that puts the spill elsewhere, for the message of a full disk. */
  #setting: string;

  private constructor(path: string, fh: FileHandle, setting: string) {
    this.#path = path;
    this.#fh = fh;
    this.#setting = setting;
  }

  /** `setting` names what moves the spill's folder (a full disk's message says it). */
  static async create(path: string, setting = "TMPDIR"): Promise<SpillWriter> {
    try {
      return new SpillWriter(path, await open(path, "wx", 0o600), setting);
    } catch (err) {
      throw writeFailure(err, { path, setting });
    }
  }

  /**
   * Writes all of `data`: write(2) on a nearly full disk writes what fits and
   * says so, without an error; only the next write fails (ENOSPC). A short
   * write taken for a whole one would leave lines missing from the file.
   */
  async #writeAll(data: Buffer, length = data.length): Promise<void> {
    try {
      for (let done = 0; done < length; ) {
        const { bytesWritten } = await this.#fh.write(data, done, length - done);
        done += bytesWritten;
      }
    } catch (err) {
      throw writeFailure(err, { path: this.#path, setting: this.#setting });
    }
  }

  get count(): number {
    return this.#count;
  }

  /** The populations the lines' numbers stand for. */
  get populations(): readonly (string | null)[] {
    return this.#populations;
  }

  /**
   * Adds a line; returns a promise to await only when the buffer had to be
   * written out. No other call may come before that promise settles.
   */
  append(
    rows: number | readonly number[],
    population: string | null,
    prev: number,
    person: string,
  ): MaybePromise {
    let pop = this.#populationNumber.get(population);
    if (pop === undefined) {
      pop = this.#populations.push(population) - 1;
      this.#populationNumber.set(population, pop);
    }
    const head = `${typeof rows === "number" ? rows : rows.join(",")}\t${pop}\t${prev}\t`;
    // UTF-8 takes at most three bytes per UTF-16 code unit.
    if (this.#used + (head.length + person.length + 1) * 3 > this.#buf.length) {
      return this.#flushThen(`${head}${person}\n`);
    }
    // Written in parts: one string of the three would be a copy of the person made for each row.
    this.#ensureRoom();
    let at = this.#used;
    at += this.#buf.write(head, at, "utf8");
    at += this.#buf.write(person, at, "utf8");
    this.#buf[at++] = 0x0a;
    this.#record(at - this.#used);
    return undefined;
  }

  /** The line of `bytes` just written at the end of the buffer. */
  #record(bytes: number): void {
    this.#used += bytes;
    this.#keepOffset();
    this.#count++;
    this.#offset += bytes;
  }

  /** Keeps the offset of the line about to be added, when it is one whose offset is kept. */
  #keepOffset(): void {
    if (this.#count % OFFSET_EVERY === 0) this.#offsets[this.#count / OFFSET_EVERY] = this.#offset;
  }

  #ensureRoom(): void {
    const wide = this.#offset + (this.#buf.length + (1 << 30)) > 0xffffffff;
    const slot = Math.floor(this.#count / OFFSET_EVERY);
    if (slot < this.#offsets.length && !(wide && this.#offsets instanceof Uint32Array)) return;
    const size = slot >= this.#offsets.length ? this.#offsets.length * 2 : this.#offsets.length;
    const grown = wide ? new Float64Array(size) : new Uint32Array(size);
    grown.set(this.#offsets);
    this.#offsets = grown;
  }

  #put(line: string): void {
    this.#ensureRoom();
    this.#record(this.#buf.write(line, this.#used, "utf8"));
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
    this.#keepOffset();
    this.#count++;
    this.#offset += data.length;
    await this.#writeAll(data);
    this.#bufferAt = this.#offset;
  }

  async flush(): Promise<void> {
    if (this.#used === 0) return;
    await this.#writeAll(this.#buf, this.#used);
    // Only now: until the write lands, read-backs of these lines come from the buffer.
    this.#bufferAt += this.#used;
    this.#used = 0;
  }

  /** One line by sequence number, from the buffer or the file. */
  row(seq: number): SpilledRow {
    const line = this.#line(seq);
    const a = line.indexOf("\t");
    const b = line.indexOf("\t", a + 1);
    const c = line.indexOf("\t", b + 1);
    const rows = line.slice(0, a);
    return {
      rows: rows.includes(",") ? rows.split(",").map(Number) : [Number(rows)],
      population: this.#populations[Number(line.slice(a + 1, b))] as string | null,
      prev: Number(line.slice(b + 1, c)),
      person: line.slice(c + 1),
    };
  }

  /** Line `seq`: from the kept offset at or before it, counting newlines. */
  #line(seq: number): string {
    if (seq < 0 || seq >= this.#count) throw new Error(`no spilled row ${seq}`);
    let at = this.#offsets[Math.floor(seq / OFFSET_EVERY)] as number;
    let skip = seq % OFFSET_EVERY;
    // The line's bytes seen so far, when it goes on past what one look gave.
    const parts: Buffer[] = [];
    for (;;) {
      const bytes = this.#bytesAt(at, seq);
      let from = 0;
      while (skip > 0) {
        const newline = bytes.indexOf(0x0a, from);
        if (newline === -1) break;
        from = newline + 1;
        skip--;
      }
      if (skip === 0) {
        const newline = bytes.indexOf(0x0a, from);
        if (newline !== -1) {
          const tail = bytes.subarray(from, newline);
          return (parts.length === 0 ? tail : Buffer.concat([...parts, tail])).toString("utf8");
        }
        // Copied: the next look may reuse the bytes this one gave.
        parts.push(Buffer.from(bytes.subarray(from)));
      }
      at += bytes.length;
    }
  }

  /**
   * Bytes of the spill from offset `at` on, as many as come at once: the rest
   * of the write buffer when `at` is in it, else a read of the file (up to
   * where the buffer starts). The file was just written and sits in the page
   * cache, so a positional read takes microseconds, where a promise round
   * trip through the thread pool would hold up the reading of the file.
   */
  #bytesAt(at: number, seq: number): Buffer {
    if (at >= this.#offset) throw new Error(`the spill ended before row ${seq}`);
    if (at >= this.#bufferAt) return this.#buf.subarray(at - this.#bufferAt, this.#used);
    this.#readFd ??= openSync(this.#path, "r");
    this.#readBuf ??= Buffer.allocUnsafe(READ_BYTES);
    const n = readSync(this.#readFd, this.#readBuf, 0, Math.min(READ_BYTES, this.#bufferAt - at), at);
    if (n === 0) throw new Error(`the spill file ended before row ${seq}`);
    return this.#readBuf.subarray(0, n);
  }

  #readBuf: Buffer | undefined;

  #closed = false;

  /** Closes the file; nothing can be read back after. */
  async close(): Promise<void> {
    if (this.#readFd !== undefined) closeSync(this.#readFd);
    this.#readFd = undefined;
    if (this.#closed) return;
    this.#closed = true;
    await this.#fh.close();
  }
}

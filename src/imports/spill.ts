import { createReadStream } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

/**
 * The validated rows of a run, one line each (row number, population, person
 * JSON), written in the first pass and read back in the second: later duplicates must be known before anything is
 * sent, and holding a file's rows in memory would not stay flat. The file is
 * private (0o600) because it holds personal data, and deleted at the end.
 */
export interface SpilledRow {
  row: number;
  population: string | null;
  /** JSON of the validated person. */
  person: string;
}

const FLUSH_AT = 1 << 20;

export class SpillWriter {
  #fh: FileHandle;
  #chunks: string[] = [];
  #pending = 0;
  #offset = 0;
  #offsets = new Float64Array(1024);
  #count = 0;
  #lastPop: string | null = null;
  #lastPopJson = "";

  private constructor(fh: FileHandle) {
    this.#fh = fh;
  }

  static async create(path: string): Promise<SpillWriter> {
    return new SpillWriter(await open(path, "wx", 0o600));
  }

  get count(): number {
    return this.#count;
  }

  /** Adds a row; returns a promise to await only when a megabyte is waiting to be written. */
  append(row: number, population: string | null, person: string): Promise<void> | undefined {
    if (population !== this.#lastPop) {
      this.#lastPop = population;
      this.#lastPopJson = population === null ? "" : JSON.stringify(population);
    }
    const line = `${row}\t${this.#lastPopJson}\t${person}\n`;
    if (this.#count + 1 >= this.#offsets.length) {
      const grown = new Float64Array(this.#offsets.length * 2);
      grown.set(this.#offsets);
      this.#offsets = grown;
    }
    this.#offsets[this.#count] = this.#offset;
    this.#count++;
    const bytes = Buffer.byteLength(line);
    this.#offset += bytes;
    this.#offsets[this.#count] = this.#offset;
    this.#chunks.push(line);
    this.#pending += bytes;
    return this.#pending >= FLUSH_AT ? this.flush() : undefined;
  }

  async flush(): Promise<void> {
    if (this.#chunks.length === 0) return;
    const data = this.#chunks.join("");
    this.#chunks = [];
    this.#pending = 0;
    await this.#fh.write(data);
  }

  /** Finishes writing; the byte ranges of the lines go to the reader. */
  #closed = false;

  async close(): Promise<Float64Array> {
    if (!this.#closed) {
      this.#closed = true;
      await this.flush();
      await this.#fh.close();
    }
    return this.#offsets.subarray(0, this.#count + 1);
  }
}

let lastPopJson = "";
let lastPop: string | null = null;

export function parseSpillLine(line: string): SpilledRow {
  const a = line.indexOf("\t");
  const b = line.indexOf("\t", a + 1);
  const pop = line.slice(a + 1, b);
  // Consecutive rows mostly share a population: parse its JSON once.
  if (pop !== lastPopJson) {
    lastPopJson = pop;
    lastPop = pop === "" ? null : (JSON.parse(pop) as string);
  }
  return {
    row: Number(line.slice(0, a)),
    population: lastPop,
    person: line.slice(b + 1),
  };
}

/** Reads the spill in order, and single lines out of order for merging duplicates. */
export class SpillReader {
  #path: string;
  #offsets: Float64Array;
  #fh: FileHandle | undefined;

  constructor(path: string, offsets: Float64Array) {
    this.#path = path;
    this.#offsets = offsets;
  }

  async *lines(signal?: AbortSignal): AsyncGenerator<string> {
    const stream = createReadStream(this.#path, { encoding: "utf8", highWaterMark: 1 << 20, signal });
    let rest = "";
    for await (const chunk of stream as AsyncIterable<string>) {
      const text = rest + chunk;
      let start = 0;
      for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
        yield text.slice(start, nl);
        start = nl + 1;
      }
      rest = text.slice(start);
    }
  }

  async line(seq: number): Promise<string> {
    this.#fh ??= await open(this.#path, "r");
    const start = this.#offsets[seq] as number;
    const end = this.#offsets[seq + 1] as number;
    const buf = Buffer.alloc(end - start);
    await this.#fh.read(buf, 0, buf.length, start);
    return buf.toString("utf8", 0, buf.length - 1);
  }

  async close(): Promise<void> {
    await this.#fh?.close();
    this.#fh = undefined;
  }
}

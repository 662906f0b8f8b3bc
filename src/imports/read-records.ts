import { isUtf8 } from "node:buffer";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { createRequire } from "node:module";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Worker } from "node:worker_threads";
import { CsvError, parse } from "csv-parse";
import type { SourceOptions } from "../config/import-job.ts";
import {
  createDecoder,
  createTextDecoder,
  type DetectedEncoding,
  decodeSample,
  detectEncoding,
  guardUtf8,
} from "./decode.ts";
import { type Delimiter, detectDelimiter } from "./detect-delimiter.ts";
import { ImportFileError } from "./import-error.ts";
import { readPlainThenParse, scanPlainRecords } from "./plain-records.ts";
import { restoreRejectsFile } from "./rejects-file.ts";

const SAMPLE_BYTES = 65_536;

export interface CsvRecord {
  /** Row number in the file, the first record being row 1. */
  row: number;
  cells: string[];
}

/** Consecutive records: `cells(i)` is row `firstRow + i` of the file, for i below `length`. */
export interface RecordChunk {
  firstRow: number;
  length: number;
  /** Bytes of the file read so far (read ahead of the records a little), for progress. */
  bytesRead: number;
  /** The cells of one record, made when asked for: a chunk's cells all alive at once are garbage to copy. */
  cells(i: number): string[];
}

/** A chunk of records as one string and the cumulative ends of its cells and records. */
interface PackedRecords {
  text: string;
  cellEnds: Int32Array;
  rowEnds: Int32Array;
}

function packedChunk(firstRow: number, bytesRead: number, packed: PackedRecords): RecordChunk {
  const { text, cellEnds, rowEnds } = packed;
  return {
    firstRow,
    length: rowEnds.length,
    bytesRead,
    cells(i) {
      const first = i === 0 ? 0 : (rowEnds[i - 1] as number);
      const end = rowEnds[i] as number;
      const out = new Array<string>(end - first);
      let from = first === 0 ? 0 : (cellEnds[first - 1] as number);
      for (let c = first; c < end; c++) {
        const to = cellEnds[c] as number;
        out[c - first] = text.slice(from, to);
        from = to;
      }
      return out;
    },
  };
}

function arrayChunk(firstRow: number, bytesRead: number, rows: string[][]): RecordChunk {
  return { firstRow, length: rows.length, bytesRead, cells: (i) => rows[i] as string[] };
}

const CHUNK_ROWS = 1000;
/**
 * Strings of 128 KB and more are large objects, which V8 frees only in a full
 * collection: a run's worth of dead chunks piled up in both heaps. Reads,
 * decoded text and chunks sent to the main thread stay below that.
 */
const CHUNK_CHARS = 48 * 1024;
const READ_BYTES = 32 * 1024;
const WORKER_MIN_BYTES = 4 * 1024 * 1024;
const requireHere = createRequire(import.meta.url);

type WorkerMessage =
  | ({ type: "chunk"; firstRow: number; bytesRead: number } & PackedRecords)
  | { type: "end" }
  | { type: "error"; code: string; message: string; lines?: number; lastRow: number }
  | { type: "crash"; error: unknown };

/**
 * Parsing runs on a second core, alongside the mapping. Plain CommonJS
 * evaluated in the thread, so it runs the same under tsx, vitest and node;
 * the fast path for UTF-8 (plain-records.ts) is pasted in as source text.
 * Chunks flow on credit: at most eight unacknowledged. A chunk crosses as one
 * string and two typed arrays rather than an array of arrays: cloning 12,000
 * small strings between heaps cost more than parsing them.
 */
const PARSE_WORKER = `
const { parentPort, workerData: d } = require("node:worker_threads");
const { createReadStream } = require("node:fs");
const { pipeline } = require("node:stream/promises");
const { parse } = require(d.csvParse);
// tsx and vitest compile with esbuild's keepNames, which wraps inner functions in __name().
const __name = (f) => f;
const scanPlainRecords = ${scanPlainRecords.toString()};
const readPlainThenParse = ${readPlainThenParse.toString()};
const guardUtf8 = ${guardUtf8.toString()};
const createTextDecoder = ${createTextDecoder.toString()};
let credits = d.credits;
let wake;
parentPort.on("message", () => { credits++; if (wake) { const w = wake; wake = undefined; w(); } });

let input;
async function* csvParseOnly() {
  input = createReadStream(d.file, { start: d.start, highWaterMark: 262144 });
  const streams = [input];
  if (d.encoding !== "utf-8") streams.push(createTextDecoder(require(d.iconv), require("node:stream").Transform, d.encoding));
  const parser = parse(d.options);
  streams.push(parser);
  let failure;
  const done = pipeline(...streams).catch((e) => { failure = e; });
  let rows = [];
  try {
    for await (const cells of parser) {
      rows.push(cells);
      if (rows.length >= d.chunkRows) { yield rows; rows = []; }
    }
  } catch (e) { failure = failure || e; }
  await done;
  if (rows.length) yield rows;
  if (failure) throw failure;
}

(async () => {
  if (d.encoding === "utf-8") input = createReadStream(d.file, { start: d.start, highWaterMark: d.readBytes });
  const chunks = d.encoding === "utf-8"
    ? readPlainThenParse(guardUtf8(input, require("node:buffer").isUtf8), d.options, d.chunkRows,
        { scan: scanPlainRecords, parse, pipeline })
    : csvParseOnly();
  let firstRow = 1;
  try {
    for await (const rows of chunks) {
      for (let first = 0; first < rows.length; ) {
        // Up to chunkChars of text a message, so that neither heap sees a large object.
        let end = first;
        let chars = 0;
        let cellCount = 0;
        while (end < rows.length && (end === first || chars < d.chunkChars)) {
          const r = rows[end++];
          cellCount += r.length;
          for (let k = 0; k < r.length; k++) chars += r[k].length;
        }
        const cellEnds = new Int32Array(cellCount);
        const rowEnds = new Int32Array(end - first);
        let text = "";
        let c = 0;
        for (let i = first; i < end; i++) {
          const r = rows[i];
          for (let k = 0; k < r.length; k++) {
            text += r[k];
            cellEnds[c++] = text.length;
          }
          rowEnds[i - first] = c;
        }
        while (credits <= 0) await new Promise((r) => { wake = r; });
        credits--;
        parentPort.postMessage({ type: "chunk", firstRow, bytesRead: d.start + (input ? input.bytesRead : 0), text, cellEnds, rowEnds }, [cellEnds.buffer, rowEnds.buffer]);
        firstRow += end - first;
        first = end;
      }
    }
  } catch (failure) {
    parentPort.postMessage({ type: "error", code: String(failure.code || ""), message: String(failure.message), lines: failure.lines, lastRow: firstRow - 1 });
    return;
  }
  parentPort.postMessage({ type: "end" });
})();
`;

export interface CsvSource {
  encoding: DetectedEncoding["encoding"];
  delimiter: Delimiter;
  size: number;
  /**
   * Every record, header included, in order, in chunks of up to a thousand:
   * an await per record would cost more than parsing it. Blank lines come
   * through as [""]. Large files are parsed on a worker thread unless
   * `worker` says otherwise. A rejects file of ours comes back as the rows it
   * was made from: without `_source_row` and `_reject_reason`, escapes undone.
   */
  records(signal?: AbortSignal, options?: { worker?: boolean }): AsyncGenerator<RecordChunk>;
}

/** Reads the start of the file to settle encoding and delimiter; the records stream from there. */
export async function openCsv(file: string, source: SourceOptions): Promise<CsvSource> {
  let sample: Buffer;
  let size: number;
  try {
    const fh = await open(file, "r");
    try {
      size = (await fh.stat()).size;
      const buf = Buffer.alloc(Math.min(SAMPLE_BYTES, size));
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      sample = buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw new ImportFileError(
      "file_unreadable",
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`,
      {
        cause: err,
      },
    );
  }
  const detected = detectEncoding(sample, source.encoding);
  const text = decodeSample(sample, detected);
  if (text.trim() === "")
    throw new ImportFileError("file_empty", `${file} is empty: there is nothing to import`);
  const delimiter = detectDelimiter(text, source.delimiter);

  const parseOptions = {
    delimiter,
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    // Mixed line endings are common in files edited on two systems; accept all three.
    record_delimiter: ["\r\n", "\n", "\r"],
    max_record_size: source.maxRecordBytes,
    skip_empty_lines: false,
  };

  async function* inThread(signal?: AbortSignal): AsyncGenerator<RecordChunk> {
    const parser = parse(parseOptions);
    const input = createReadStream(file, { start: detected.bomLength, highWaterMark: 256 * 1024 });
    const decoder = createDecoder(detected.encoding);
    const streams: (Readable | NodeJS.ReadWriteStream)[] = decoder
      ? [input, decoder]
      : [Readable.from(guardUtf8(input, isUtf8), { objectMode: false })];
    let row = 0;
    let rows: string[][] = [];
    const chunker = new Transform({
      objectMode: true,
      transform(cells: string[], _enc, done) {
        rows.push(cells);
        if (rows.length >= CHUNK_ROWS) {
          this.push(arrayChunk(row + 1, detected.bomLength + input.bytesRead, rows));
          row += rows.length;
          rows = [];
        }
        done();
      },
      flush(done) {
        if (rows.length) this.push(arrayChunk(row + 1, detected.bomLength + input.bytesRead, rows));
        row += rows.length;
        done();
      },
    });
    streams.push(parser, chunker);
    let failure: unknown;
    const done = pipeline(streams as unknown as [Readable, NodeJS.ReadWriteStream], { signal }).catch(
      (err) => {
        failure = err;
      },
    );
    try {
      for await (const chunk of chunker as AsyncIterable<RecordChunk>) yield chunk;
    } catch (err) {
      failure ??= err;
    }
    await done;
    if (failure !== undefined) throw fileError(failure, row + rows.length, signal);
  }

  async function* inWorker(signal?: AbortSignal): AsyncGenerator<RecordChunk> {
    signal?.throwIfAborted();
    const worker = new Worker(PARSE_WORKER, {
      eval: true,
      // The thread only parses: a small young generation keeps its memory down at no cost in speed.
      resourceLimits: { maxYoungGenerationSizeMb: 8 },
      workerData: {
        file,
        start: detected.bomLength,
        encoding: detected.encoding,
        options: parseOptions,
        csvParse: requireHere.resolve("csv-parse"),
        iconv: requireHere.resolve("iconv-lite"),
        chunkRows: CHUNK_ROWS,
        chunkChars: CHUNK_CHARS,
        readBytes: READ_BYTES,
        credits: 8,
      },
    });
    const queue: WorkerMessage[] = [];
    let wake: (() => void) | undefined;
    const push = (m: WorkerMessage) => {
      queue.push(m);
      wake?.();
    };
    worker.on("message", push);
    worker.on("error", (error) => push({ type: "crash", error }));
    const onAbort = () => push({ type: "crash", error: signal?.reason });
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        const m = queue.shift() as WorkerMessage;
        if (m.type === "chunk") {
          worker.postMessage("ack");
          yield packedChunk(m.firstRow, m.bytesRead, m);
        } else if (m.type === "end") return;
        else if (m.type === "error") {
          const err = Object.assign(new CsvError(m.code as never, m.message), { lines: m.lines });
          throw fileError(err, m.lastRow, signal);
        } else throw signal?.aborted ? signal.reason : m.error;
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      await worker.terminate();
    }
  }

  function records(signal?: AbortSignal, options: { worker?: boolean } = {}): AsyncGenerator<RecordChunk> {
    // A thread costs ~30 ms to start: worth it from a few megabytes on.
    const useWorker = options.worker ?? size >= WORKER_MIN_BYTES;
    // A corrected rejects file imports the values its rows had in the original file.
    return restoreRejectsFile(useWorker ? inWorker(signal) : inThread(signal));
  }

  return { encoding: detected.encoding, delimiter, size, records };
}

function fileError(err: unknown, lastRow: number, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return signal.reason;
  if (!(err instanceof CsvError)) return err;
  const lines = (err as CsvError & { lines?: number }).lines;
  const at = lines === undefined ? "" : ` (line ${lines})`;
  if (err.code === "CSV_QUOTE_NOT_CLOSED") {
    return new ImportFileError(
      "file_unclosed_quote",
      `unclosed quote: the record after row ${lastRow} opens a quote that never closes${at}; fix the quote, nothing was imported`,
      { cause: err },
    );
  }
  if (err.code === "CSV_MAX_RECORD_SIZE") {
    return new ImportFileError(
      "file_record_too_large",
      `the record after row ${lastRow} is larger than source.maxRecordBytes${at}, most likely an unclosed quote; nothing was imported`,
      { cause: err },
    );
  }
  return new ImportFileError(
    "file_unparseable",
    `cannot parse the file after row ${lastRow}: ${err.message}`,
    {
      cause: err,
    },
  );
}

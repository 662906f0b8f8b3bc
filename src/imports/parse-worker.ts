/**
 * The parse worker's program: runs in a worker thread that read-records.ts
 * starts for large files, so parsing takes a second core while the main
 * thread maps and validates. Reads the file, parses it (the UTF-8 fast path of
 * plain-records.ts, csv-parse for the rest and for other encodings) and posts
 * the rows in chunks: their cells, or, when the main thread asks, the people
 * they map to (chunk-mapper.ts, packed by mapped-transport.ts), so that
 * mapping takes this thread too.
 *
 * Chunks flow on credit: a counter both threads share (`credits`), which
 * the worker takes one from per chunk and the main thread gives one back to
 * per chunk it takes. Atomics, not an "ack" message: a message a chunk cost
 * the main thread ~0.6 s of a 300,000-row import in postMessage. A chunk
 * crosses as one string and two typed arrays rather than an array of arrays:
 * cloning 12,000 small strings between heaps cost more than parsing them.
 */
import { isUtf8 } from "node:buffer";
import { closeSync, createReadStream, openSync, type ReadStream, readSync } from "node:fs";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import type { ImportJobDefinition } from "../config/import-job.ts";
import { ChunkMapper } from "./chunk-mapper.ts";
import { type MappedChunk, transferablesOf } from "./mapped-transport.ts";
import { readPlainThenParse, scanPlainRecords } from "./plain-records.ts";
import { restoreRejectsFile } from "./rejects-file.ts";
import { createTextDecoder, type Encoding, guardUtf8 } from "./text-streams.ts";

export interface ParseWorkerData {
  file: string;
  /** Where the records start: after the byte-order mark. */
  start: number;
  encoding: Encoding;
  /** csv-parse's options, as read-records.ts settles them. */
  options: { delimiter: string; max_record_size: number } & Record<string, unknown>;
  chunkRows: number;
  /** Up to this many characters of cells a message, so that neither heap sees a large object. */
  chunkChars: number;
  readBytes: number;
  /** One Int32 the two threads share: chunks the worker may still post before the main thread takes one. */
  credits: SharedArrayBuffer;
  /** When given, rows are mapped here (chunk-mapper.ts) and posted as "mapped" chunks instead of cells. */
  mapWith?: { definition: ImportJobDefinition; stamps: boolean };
}

/** What the worker posts; "chunk" carries its rows packed (PackedRecords in read-records.ts). */
export type ParseWorkerMessage =
  | {
      type: "chunk";
      firstRow: number;
      bytesRead: number;
      text: string;
      cellEnds: Int32Array;
      rowEnds: Int32Array;
    }
  | { type: "mapped"; chunk: MappedChunk }
  | { type: "end" }
  | { type: "error"; code: string; message: string; lines?: number; lastRow: number };

// csv-parse and iconv-lite load only when a file needs them: most files are plain UTF-8 throughout,
// and the first rows come ~0.1 s sooner when the thread starts without them.
const loadCsvParse = () => import("csv-parse");

async function* csvParseOnly(d: ParseWorkerData, input: ReadStream): AsyncGenerator<string[][]> {
  const [{ parse }, { default: iconv }] = await Promise.all([loadCsvParse(), import("iconv-lite")]);
  const parser = parse(d.options);
  const decoder = createTextDecoder(iconv, Transform, d.encoding as Exclude<Encoding, "utf-8">);
  let failure: unknown;
  const done = pipeline(input, decoder, parser).catch((e: unknown) => {
    failure = e;
  });
  let rows: string[][] = [];
  try {
    for await (const cells of parser) {
      rows.push(cells as string[]);
      if (rows.length >= d.chunkRows) {
        yield rows;
        rows = [];
      }
    }
  } catch (e) {
    failure ??= e;
  }
  await done;
  if (rows.length) yield rows;
  if (failure !== undefined) throw failure;
}

/**
 * The file's bytes from `start`, `size` at a time, read synchronously: this
 * thread has nothing else to do meanwhile, and a read through the thread pool
 * (a ReadStream) cost its event loop a round trip a read — ~5,000 reads a
 * million rows. `bytesRead` counts what was read so far, as a ReadStream's.
 */
function readSyncChunks(file: string, start: number, size: number) {
  const progress = { bytesRead: 0 };
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const fd = openSync(file, "r");
    try {
      for (;;) {
        const buf = Buffer.allocUnsafe(size);
        const n = readSync(fd, buf, 0, size, start + progress.bytesRead);
        if (n === 0) return;
        progress.bytesRead += n;
        yield n === size ? buf : buf.subarray(0, n);
      }
    } finally {
      closeSync(fd);
    }
  }
  return { progress, chunks: chunks() };
}

/** Packs rows [first, end) of `rows`, ending where the text passes chunkChars. */
function pack(rows: string[][], first: number, chunkChars: number) {
  let end = first;
  let chars = 0;
  let cellCount = 0;
  while (end < rows.length && (end === first || chars < chunkChars)) {
    const r = rows[end++] as string[];
    cellCount += r.length;
    for (let k = 0; k < r.length; k++) chars += (r[k] as string).length;
  }
  const cellEnds = new Int32Array(cellCount);
  const rowEnds = new Int32Array(end - first);
  let text = "";
  let c = 0;
  for (let i = first; i < end; i++) {
    const r = rows[i] as string[];
    for (let k = 0; k < r.length; k++) {
      text += r[k];
      cellEnds[c++] = text.length;
    }
    rowEnds[i - first] = c;
  }
  return { end, text, cellEnds, rowEnds };
}

/** Waits for a credit and takes it: the main thread gives one back per chunk it takes. */
async function takeCredit(credits: Int32Array): Promise<void> {
  while (Atomics.load(credits, 0) <= 0) {
    const waiting = Atomics.waitAsync(credits, 0, 0);
    if (!waiting.async) continue;
    // A pending waitAsync does not keep the thread's event loop alive: a timer does, meanwhile.
    const alive = setInterval(() => {}, 60_000);
    await waiting.value;
    clearInterval(alive);
  }
  Atomics.sub(credits, 0, 1);
}

async function run(d: ParseWorkerData, port: NonNullable<typeof parentPort>): Promise<void> {
  const credits = new Int32Array(d.credits);
  const utf8 = d.encoding === "utf-8";
  const reading = utf8 ? readSyncChunks(d.file, d.start, d.readBytes) : undefined;
  const input: { bytesRead: number } = reading
    ? reading.progress
    : createReadStream(d.file, { start: d.start, highWaterMark: 262_144 });
  const chunks = reading
    ? readPlainThenParse(guardUtf8(reading.chunks, isUtf8), d.options, d.chunkRows, {
        scan: scanPlainRecords,
        parse: async (options) => (await loadCsvParse()).parse(options),
        pipeline: async (source, destination) => {
          await pipeline(source, destination);
        },
      })
    : csvParseOnly(d, input as ReadStream);
  let firstRow = 1;
  async function* cellChunks() {
    for await (const rows of chunks) {
      const chunk = {
        firstRow,
        length: rows.length,
        bytesRead: d.start + input.bytesRead,
        cells: (i: number) => rows[i] as string[],
      };
      firstRow += rows.length;
      yield chunk;
    }
  }
  try {
    if (d.mapWith) {
      const mapper = new ChunkMapper(d.mapWith.definition, { ...d.mapWith, maxChars: d.chunkChars });
      for await (const cells of restoreRejectsFile(cellChunks())) {
        for (const chunk of mapper.map(cells)) {
          await takeCredit(credits);
          port.postMessage({ type: "mapped", chunk } satisfies ParseWorkerMessage, transferablesOf(chunk));
        }
      }
    } else {
      for await (const rows of chunks) {
        for (let first = 0; first < rows.length; ) {
          const { end, text, cellEnds, rowEnds } = pack(rows, first, d.chunkChars);
          await takeCredit(credits);
          const message: ParseWorkerMessage = {
            type: "chunk",
            firstRow,
            bytesRead: d.start + input.bytesRead,
            text,
            cellEnds,
            rowEnds,
          };
          port.postMessage(message, [cellEnds.buffer, rowEnds.buffer]);
          firstRow += end - first;
          first = end;
        }
      }
    }
  } catch (failure) {
    const f = failure as { code?: unknown; message?: unknown; lines?: number };
    const message: ParseWorkerMessage = {
      type: "error",
      code: String(f.code ?? ""),
      message: String(f.message),
      ...(f.lines === undefined ? {} : { lines: f.lines }),
      lastRow: firstRow - 1,
    };
    port.postMessage(message);
    return;
  }
  port.postMessage({ type: "end" } satisfies ParseWorkerMessage);
}

if (!isMainThread && parentPort) await run(workerData as ParseWorkerData, parentPort);

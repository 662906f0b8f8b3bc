import { open } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { CsvError } from "csv-parse";
import type { ImportJobDefinition, SourceOptions } from "../config/import-job.ts";
import { fileError } from "./csv-file-error.ts";
import { type DetectedEncoding, decodeSample } from "./decode.ts";
import { type Delimiter, detectDelimiter } from "./detect-delimiter.ts";
import { ImportFileError } from "./import-error.ts";
import type { MappedChunk } from "./mapped-transport.ts";
import { parseHere } from "./parse-here.ts";
import type { ParseWorkerData, ParseWorkerMessage } from "./parse-worker.ts";
import type { RecordChunk } from "./record-chunk.ts";
import { restoreRejectsFile } from "./rejects-file.ts";
import { fileEncoding } from "./whole-file-utf8.ts";

const SAMPLE_BYTES = 65_536;

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

/**
 * Rows the parse thread parses before it maps them. Their cells live until
 * the last of them is mapped: at 1,000 rows enough of them outlived two young
 * collections to be promoted, ~0.8 s of young collections at 1M rows; at 250,
 * ~0.5 s, and the thread's young generation can be smaller.
 */
const WORKER_CHUNK_ROWS = 250;
/**
 * Strings of 128 KB and more are large objects, which V8 frees only in a full
 * collection: a run's worth of dead chunks piled up in both heaps. Reads,
 * decoded text and chunks sent to the main thread stay below that.
 */
const CHUNK_CHARS = 48 * 1024;
const READ_BYTES = 32 * 1024;
const WORKER_MIN_BYTES = 4 * 1024 * 1024;
const requireHere = createRequire(import.meta.url);

type WorkerMessage = ParseWorkerMessage | { type: "crash"; error: unknown };

/** tsx's ESM API, located as its package.json exports it: require.resolve would give the CommonJS one. */
function tsxEsmApi(): URL {
  const pkg = requireHere.resolve("tsx/package.json");
  const exported = (requireHere(pkg) as { exports: Record<string, { import: { default: string } }> }).exports;
  return pathToFileURL(
    path.join(path.dirname(pkg), exported["./esm/api"]?.import.default ?? "dist/esm/api/index.mjs"),
  );
}

/**
 * The parse worker's module (parse-worker.ts): parse-worker.ts beside this
 * file under tsx and vitest, parse-worker.js once compiled. A .ts worker
 * starts by registering tsx in its own thread — the loader of the main thread
 * is not inherited by workers, and Node 20 ignores `--import` in a worker's
 * execArgv — then imports the module.
 */
const WORKER_URL = new URL(`./parse-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
const WORKER_ENTRY: string | URL = WORKER_URL.pathname.endsWith(".ts")
  ? `import(${JSON.stringify(tsxEsmApi().href)})
      .then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); })`
  : WORKER_URL;

export interface CsvSource {
  encoding: DetectedEncoding["encoding"];
  /** The file starts with a byte-order mark (of any encoding): the rejects file gets one too. */
  bom: boolean;
  /** What detection found worth saying (a byte-order mark that the text disagrees with). */
  encodingNote: string | undefined;
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
  /** Large enough for the parse thread to pay: parsed there unless a reader says otherwise. */
  parseThreadPays: boolean;
  /**
   * The records mapped to people under `def` on the parse thread, which
   * takes the second core for mapping too (chunk-mapper.ts there), in its
   * transport (mapped-transport.ts). `stamps`: stamp the valid rows for the
   * change-only state.
   */
  mappedOnParseThread(
    def: ImportJobDefinition,
    stamps: boolean,
    signal?: AbortSignal,
  ): AsyncGenerator<MappedChunk>;
}

/** The first bytes of the file, which settle its encoding and delimiter, and its size. */
async function readStart(file: string): Promise<{ sample: Buffer; size: number }> {
  try {
    const fh = await open(file, "r");
    try {
      const size = (await fh.stat()).size;
      const buf = Buffer.alloc(Math.min(SAMPLE_BYTES, size));
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      return { sample: buf.subarray(0, bytesRead), size };
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw new ImportFileError(
      "file_unreadable",
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`,
      { cause: err },
    );
  }
}

/** csv-parse's options for a file: every line ending, quotes taken leniently, blank lines kept (counted). */
function csvParseOptions(delimiter: Delimiter, source: SourceOptions) {
  return {
    delimiter,
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    // Mixed line endings are common in files edited on two systems; accept all three.
    record_delimiter: ["\r\n", "\n", "\r"],
    max_record_size: source.maxRecordBytes,
    skip_empty_lines: false,
  };
}

/** Where the parse thread reads from and how: one file's settled encoding and csv-parse options. */
interface ParseSetup {
  file: string;
  detected: DetectedEncoding;
  options: ReturnType<typeof csvParseOptions>;
}

/**
 * Starts the parse thread (parse-worker.ts) and yields its chunks, cells or
 * mapped, as they come; `credits` holds it to a few chunks ahead. A thread
 * that fails or ends early fails the read; the thread ends with the read.
 */
async function* fromParseThread(
  setup: ParseSetup,
  signal?: AbortSignal,
  mapWith?: ParseWorkerData["mapWith"],
): AsyncGenerator<Extract<ParseWorkerMessage, { type: "chunk" | "mapped" }>> {
  signal?.throwIfAborted();
  const workerData: ParseWorkerData = {
    file: setup.file,
    start: setup.detected.bomLength,
    encoding: setup.detected.encoding,
    options: setup.options,
    chunkRows: WORKER_CHUNK_ROWS,
    chunkChars: CHUNK_CHARS,
    readBytes: READ_BYTES,
    credits: new SharedArrayBuffer(4),
    ...(mapWith ? { mapWith } : {}),
  };
  const credits = new Int32Array(workerData.credits);
  credits[0] = 8;
  const worker = new Worker(WORKER_ENTRY, {
    eval: typeof WORKER_ENTRY === "string",
    // Mapping makes garbage a row. At 8 MB, with 1,000-row chunks, the thread spent ~1 s of 3 in young
    // collections at 300,000 rows. With 250-row chunks and ~2 KB a row, at 1M rows: 12 MB, ~500 young
    // collections, peak RSS 184–188 MB over three runs; 16 MB, ~250 and 192–215 MB, ~0.3 s faster.
    resourceLimits: { maxYoungGenerationSizeMb: 12 },
    workerData,
  });
  const queue: WorkerMessage[] = [];
  let wake: (() => void) | undefined;
  const push = (m: WorkerMessage) => {
    queue.push(m);
    wake?.();
  };
  worker.on("message", push);
  worker.on("error", (error) => push({ type: "crash", error }));
  // After "end" this is never read; before it, a thread gone quietly must fail the read, not hang it.
  worker.on("exit", (code) =>
    push({
      type: "crash",
      error: new Error(`the parse thread ended (code ${code}) before the end of the file`),
    }),
  );
  const onAbort = () => push({ type: "crash", error: signal?.reason });
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      const m = queue.shift() as WorkerMessage;
      if (m.type === "chunk" || m.type === "mapped") {
        Atomics.add(credits, 0, 1);
        Atomics.notify(credits, 0);
        yield m;
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

async function* recordsFromParseThread(setup: ParseSetup, signal?: AbortSignal): AsyncGenerator<RecordChunk> {
  for await (const m of fromParseThread(setup, signal)) {
    if (m.type === "chunk") yield packedChunk(m.firstRow, m.bytesRead, m);
  }
}

async function* mappedOnParseThread(
  setup: ParseSetup,
  mapWith: NonNullable<ParseWorkerData["mapWith"]>,
  signal?: AbortSignal,
): AsyncGenerator<MappedChunk> {
  for await (const m of fromParseThread(setup, signal, mapWith)) {
    if (m.type === "mapped") yield m.chunk;
  }
}

/** Reads the start of the file to settle encoding and delimiter; the records stream from there. */
export async function openCsv(file: string, source: SourceOptions): Promise<CsvSource> {
  const { sample, size } = await readStart(file);
  const detected = await fileEncoding(file, sample, size, source.encoding);
  const text = await decodeSample(sample, detected);
  if (text.trim() === "")
    throw new ImportFileError("file_empty", `${file} is empty: there is nothing to import`);
  const delimiter = detectDelimiter(text, source.delimiter);
  const setup: ParseSetup = { file, detected, options: csvParseOptions(delimiter, source) };
  const here = (signal?: AbortSignal) => parseHere(file, detected, setup.options, signal);
  // A thread costs ~30 ms to start: worth it from a few megabytes on.
  const parseThreadPays = size >= WORKER_MIN_BYTES;

  return {
    encoding: detected.encoding,
    bom: detected.bomLength > 0,
    encodingNote: detected.note,
    delimiter,
    size,
    records(signal, options = {}) {
      // A corrected rejects file imports the values its rows had in the original file.
      return restoreRejectsFile(
        (options.worker ?? parseThreadPays) ? recordsFromParseThread(setup, signal) : here(signal),
      );
    },
    parseThreadPays,
    mappedOnParseThread(def, stamps, signal) {
      return mappedOnParseThread(setup, { definition: def, stamps }, signal);
    },
  };
}

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { CsvError } from "csv-parse";
import type { ImportJobDefinition, SourceOptions } from "../config/import-job.ts";
import { ChunkMapper } from "./chunk-mapper.ts";
import { fileError } from "./csv-file-error.ts";
import { type CsvFormat, settleCsvFormat } from "./csv-format.ts";
import type { MappedChunk } from "./mapped-transport.ts";
import { parseHere } from "./parse-here.ts";
import type { ParseWorkerData, ParseWorkerMessage } from "./parse-worker.ts";
import type { RecordChunk } from "./record-chunk.ts";
import { restoreRejectsFile } from "./rejects-file.ts";

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

/** A CSV file, its format settled, and its records read from the start each time they are asked for. */
export interface CsvSource extends CsvFormat {
  /**
   * Every record, header included, in order, in chunks of up to a thousand:
   * an await per record would cost more than parsing it. Blank lines come
   * through as [""]. Large files are parsed on a worker thread unless
   * `worker` says otherwise. A rejects file of ours comes back as the rows it
   * was made from: without `_source_row` and `_reject_reason`, escapes undone.
   */
  records(signal?: AbortSignal, options?: { worker?: boolean }): AsyncGenerator<RecordChunk>;
}

/**
 * Starts the parse thread (parse-worker.ts) and yields its chunks, cells or
 * mapped, as they come; `credits` holds it to a few chunks ahead. A thread
 * that fails or ends early fails the read; the thread ends with the read.
 */
async function* fromParseThread(
  format: CsvFormat,
  signal?: AbortSignal,
  mapWith?: ParseWorkerData["mapWith"],
): AsyncGenerator<Extract<ParseWorkerMessage, { type: "chunk" | "mapped" }>> {
  signal?.throwIfAborted();
  const workerData: ParseWorkerData = {
    file: format.file,
    start: format.detected.bomLength,
    encoding: format.detected.encoding,
    options: format.parseOptions,
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

async function* recordsFromParseThread(format: CsvFormat, signal?: AbortSignal): AsyncGenerator<RecordChunk> {
  for await (const m of fromParseThread(format, signal)) {
    if (m.type === "chunk") yield packedChunk(m.firstRow, m.bytesRead, m);
  }
}

/**
 * The records of a file whose format is settled, from the first: see
 * CsvSource.records. A corrected rejects file imports the values its rows
 * had in the original file.
 */
export function readRecords(
  format: CsvFormat,
  signal?: AbortSignal,
  options: { worker?: boolean } = {},
): AsyncGenerator<RecordChunk> {
  const records =
    (options.worker ?? format.parseThreadPays)
      ? recordsFromParseThread(format, signal)
      : parseHere(format.file, format.detected, format.parseOptions, signal);
  return restoreRejectsFile(records);
}

/**
 * The records mapped to people under `def`, in the transport of
 * mapped-transport.ts: on the parse thread, which takes the second core for
 * mapping too (chunk-mapper.ts there), or, for a small file, here.
 * `stamps`: stamp the valid rows for the change-only state.
 */
export async function* mappedChunks(
  format: CsvFormat,
  def: ImportJobDefinition,
  options: { stamps: boolean; worker?: boolean; signal?: AbortSignal },
): AsyncGenerator<MappedChunk> {
  if (options.worker ?? format.parseThreadPays) {
    const mapWith = { definition: def, stamps: options.stamps };
    for await (const m of fromParseThread(format, options.signal, mapWith)) {
      if (m.type === "mapped") yield m.chunk;
    }
    return;
  }
  const records = readRecords(format, options.signal, { worker: false });
  const mapper = new ChunkMapper(def, { stamps: options.stamps });
  for await (const chunk of records) yield* mapper.map(chunk);
}

/** Settles the file's format (csv-format.ts); the records stream from the start at each `records`. */
export async function openCsv(file: string, source: SourceOptions): Promise<CsvSource> {
  const format = await settleCsvFormat(file, source);
  return { ...format, records: (signal, options) => readRecords(format, signal, options) };
}

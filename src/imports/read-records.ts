import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { type Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { CsvError, parse } from "csv-parse";
import type { SourceOptions } from "../config/import-job.ts";
import { createDecoder, type DetectedEncoding, decodeSample, detectEncoding } from "./decode.ts";
import { type Delimiter, detectDelimiter } from "./detect-delimiter.ts";
import { ImportFileError } from "./import-error.ts";

const SAMPLE_BYTES = 65_536;

export interface CsvRecord {
  /** Row number in the file, the first record being row 1. */
  row: number;
  cells: string[];
}

export interface CsvSource {
  encoding: DetectedEncoding["encoding"];
  delimiter: Delimiter;
  size: number;
  /**
   * Every record, header included, in order, in chunks of up to a thousand:
   * an await per record would cost more than parsing it. Blank lines come
   * through as [""].
   */
  records(signal?: AbortSignal): AsyncGenerator<CsvRecord[]>;
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

  async function* records(signal?: AbortSignal): AsyncGenerator<CsvRecord[]> {
    const parser = parse({
      delimiter,
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      // Mixed line endings are common in files edited on two systems; accept all three.
      record_delimiter: ["\r\n", "\n", "\r"],
      max_record_size: source.maxRecordBytes,
      skip_empty_lines: false,
    });
    const streams: (Readable | NodeJS.ReadWriteStream)[] = [
      createReadStream(file, { start: detected.bomLength, highWaterMark: 256 * 1024 }),
    ];
    const decoder = createDecoder(detected.encoding);
    if (decoder) streams.push(decoder);
    let row = 0;
    let chunk: CsvRecord[] = [];
    const chunker = new Transform({
      objectMode: true,
      transform(cells: string[], _enc, done) {
        chunk.push({ row: ++row, cells });
        if (chunk.length >= 1000) {
          this.push(chunk);
          chunk = [];
        }
        done();
      },
      flush(done) {
        if (chunk.length) this.push(chunk);
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
      for await (const records of chunker as AsyncIterable<CsvRecord[]>) yield records;
    } catch (err) {
      failure ??= err;
    }
    await done;
    if (failure !== undefined) throw fileError(failure, row, signal);
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

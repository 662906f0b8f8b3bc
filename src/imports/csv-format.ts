import { open } from "node:fs/promises";
import type { SourceOptions } from "../config/import-job.ts";
import { type DetectedEncoding, decodeSample } from "./decode.ts";
import { type Delimiter, detectDelimiter } from "./detect-delimiter.ts";
import { ImportFileError } from "./import-error.ts";
import { fileEncoding } from "./whole-file-utf8.ts";

const SAMPLE_BYTES = 65_536;
/** A thread costs ~30 ms to start: worth it from a few megabytes on. */
const WORKER_MIN_BYTES = 4 * 1024 * 1024;

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

export type CsvParseOptions = ReturnType<typeof csvParseOptions>;

/**
 * How a CSV file is to be read, settled once from its first bytes: plain
 * values, for the report and the rejects file, and for the readers that
 * read-records.ts opens on it.
 */
export interface CsvFormat {
  file: string;
  detected: DetectedEncoding;
  encoding: DetectedEncoding["encoding"];
  /** The file starts with a byte-order mark (of any encoding): the rejects file gets one too. */
  bom: boolean;
  /** What detection found worth saying (a byte-order mark that the text disagrees with). */
  encodingNote: string | undefined;
  delimiter: Delimiter;
  size: number;
  parseOptions: CsvParseOptions;
  /** Large enough for the parse thread to pay: parsed there unless a reader says otherwise. */
  parseThreadPays: boolean;
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

/** Reads the start of the file (and, for UTF-8, checks the rest) to settle its encoding and delimiter. */
export async function settleCsvFormat(file: string, source: SourceOptions): Promise<CsvFormat> {
  const { sample, size } = await readStart(file);
  const detected = await fileEncoding(file, sample, size, source.encoding);
  const text = await decodeSample(sample, detected);
  if (text.trim() === "")
    throw new ImportFileError("file_empty", `${file} is empty: there is nothing to import`);
  const delimiter = detectDelimiter(text, source.delimiter);
  return {
    file,
    detected,
    encoding: detected.encoding,
    bom: detected.bomLength > 0,
    encodingNote: detected.note,
    delimiter,
    size,
    parseOptions: csvParseOptions(delimiter, source),
    parseThreadPays: size >= WORKER_MIN_BYTES,
  };
}

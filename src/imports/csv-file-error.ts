import { CsvError } from "csv-parse";
import { ImportFileError } from "./import-error.ts";

/**
 * What stopped the parser, as the file's error: an unclosed quote, a record
 * past source.maxRecordBytes, or another fault of the file, named after the
 * last row read and never quoting a cell. An aborted read is its abort reason.
 */
export function fileError(err: unknown, lastRow: number, signal: AbortSignal | undefined): unknown {
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
    `cannot parse the file after row ${lastRow}${at}: ${parseFailure(err)}`,
    {
      cause: err,
    },
  );
}

/** What the parser met, in our words: some of csv-parse's own messages quote the field they stopped in. */
const CSV_FAILURES: Record<string, string> = {
  CSV_INVALID_CLOSING_QUOTE: "a closing quote is followed by something other than a delimiter",
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE:
    "a closing quote is followed by something other than a delimiter",
  INVALID_OPENING_QUOTE: "a quote opens in the middle of a field",
  CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: "a record has another number of fields than the header",
  CSV_RECORD_INCONSISTENT_COLUMNS: "a record has another number of fields than the header",
};

function parseFailure(err: CsvError): string {
  const words = CSV_FAILURES[err.code];
  if (words) return `${words} (${err.code})`;
  // Another of csv-parse's codes: named, never its message, which may hold the cells it read.
  return /^(CSV_|INVALID_)/.test(err.code) ? `the parser stopped (${err.code})` : err.message;
}

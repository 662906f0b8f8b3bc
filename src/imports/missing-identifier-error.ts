import type { RecruitSyncErrorOptions } from "../errors/index.ts";
import { ImportFileError } from "./import-error.ts";
import { describeHeaders, looksLikeDataRow } from "./rules/header-echo.ts";

/** Headers named in the message before it says how many more there are. */
const HEADERS_SHOWN = 50;

/**
 * No column of the file feeds the identifier (a preset none of whose headers
 * is there, a job naming a header the file lacks, a file read without a header
 * row): every row would be rejected, so the run stops at the header instead,
 * before anything is sent. `expected` are the headers that would have served,
 * `found` the file's.
 */
export class MissingIdentifierError extends ImportFileError {
  readonly identifier: string;
  readonly expected: readonly string[];
  readonly found: readonly string[];

  constructor(
    identifier: string,
    expected: { headers: readonly string[]; from: string },
    found: { headers: readonly string[]; headerRow: boolean },
    options: RecruitSyncErrorOptions = {},
  ) {
    const shown = found.headers.slice(0, HEADERS_SHOWN).join(", ");
    const more = found.headers.length > HEADERS_SHOWN ? `, … (${found.headers.length} in all)` : "";
    const names = expected.headers.map((h) => `"${h}"`).join(", ");
    const wanted = expected.headers.length === 1 ? `the column ${names}` : `one of the columns ${names}`;
    const has = found.headerRow
      ? looksLikeDataRow(found.headers)
        ? describeHeaders(found.headers)
        : `the file's headers are: ${shown}${more}`
      : `the file is read without a header row (source.header: false), so its columns are ${shown}${more}: map one with columns: [{column: columnN, to: …}]`;
    super(
      "file_missing_identifier",
      `no column for the identifier ${identifier}: ${expected.from} expects ${wanted}; ${has}`,
      options,
    );
    this.identifier = identifier;
    this.expected = expected.headers;
    // A first row of a person's cells is no header: kept out of the error, which logs and reports carry.
    this.found = found.headerRow && looksLikeDataRow(found.headers) ? [] : found.headers;
  }
}

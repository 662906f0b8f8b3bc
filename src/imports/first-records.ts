import { SourceOptions } from "../config/import-job.ts";
import { openCsv } from "./read-records.ts";

export interface FirstRecords {
  /** The header row (if the file has one) and up to `rows` records after it, blank lines skipped. */
  records: string[][];
  encoding: string;
  delimiter: string;
}

/**
 * The first records of a file, read as an import reads them (encoding and
 * delimiter detected): what a suggestion sniffs and a page shows. The cells
 * stay in memory; nothing more of the file is read.
 */
export async function readFirstRecords(file: string, rows: number): Promise<FirstRecords> {
  const csv = await openCsv(file, SourceOptions.parse({}));
  const records: string[][] = [];
  const chunks = csv.records(undefined, { worker: false });
  try {
    for await (const chunk of chunks) {
      for (let i = 0; i < chunk.length && records.length <= rows; i++) {
        const cells = chunk.cells(i);
        if (cells.length === 1 && (cells[0] ?? "").trim() === "") continue;
        records.push(cells);
      }
      if (records.length > rows) break;
    }
  } finally {
    await chunks.return(undefined);
  }
  return { records, encoding: csv.encoding, delimiter: csv.delimiter };
}

import { SourceOptions } from "../config/import-job.ts";
import { openCsv } from "../imports/index.ts";

/** Rows read to sniff values: enough to tell a column of emails, few enough to answer at once. */
export const SAMPLE_ROWS = 200;

/**
 * The first records of a file (its header row, if any, and up to `rows`
 * more), read as an import reads them: encoding and delimiter detected,
 * blank lines skipped. The cells stay in memory only.
 */
export async function readSample(file: string, rows = SAMPLE_ROWS): Promise<string[][]> {
  const csv = await openCsv(file, SourceOptions.parse({}));
  const out: string[][] = [];
  const records = csv.records(undefined, { worker: false });
  try {
    for await (const chunk of records) {
      for (let i = 0; i < chunk.length && out.length <= rows; i++) {
        const cells = chunk.cells(i);
        if (cells.length === 1 && (cells[0] ?? "").trim() === "") continue;
        out.push(cells);
      }
      if (out.length > rows) break;
    }
  } finally {
    await records.return(undefined);
  }
  return out;
}

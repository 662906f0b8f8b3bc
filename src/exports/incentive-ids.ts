import { createReadStream } from "node:fs";
import { parse } from "csv-parse";

const ID_HEADERS = new Set(["incentiveid", "incentive_id", "id"]);

/**
 * Incentive ids from a CSV file: the column headed incentiveId, incentive_id
 * or id when the first row names one, else the first column of every row.
 * Blank cells are skipped.
 */
export async function readIncentiveIdsFile(file: string, signal?: AbortSignal): Promise<string[]> {
  const ids: string[] = [];
  const parser = createReadStream(file, { signal }).pipe(
    parse({ relax_column_count: true, skip_empty_lines: true, trim: true, bom: true }),
  );
  let column: number | undefined;
  for await (const record of parser as AsyncIterable<string[]>) {
    if (column === undefined) {
      const header = record.findIndex((c) => ID_HEADERS.has(c.toLowerCase()));
      column = header === -1 ? 0 : header;
      if (header !== -1) continue;
    }
    const id = record[column];
    if (id) ids.push(id);
  }
  return ids;
}

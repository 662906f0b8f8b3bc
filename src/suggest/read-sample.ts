import { readFirstRecords } from "../imports/index.ts";

/** Rows read to sniff values: enough to tell a column of emails, few enough to answer at once. */
export const SAMPLE_ROWS = 200;

/** The first records of a file (its header row, if any, and up to `rows` more), read as an import reads them. */
export async function readSample(file: string, rows = SAMPLE_ROWS): Promise<string[][]> {
  return (await readFirstRecords(file, rows)).records;
}

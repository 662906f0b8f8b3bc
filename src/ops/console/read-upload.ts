import { ImportFileError, readFirstRecords } from "../../imports/index.ts";
import { OpsHttpError } from "../ops-http-error.ts";

/** Rows of the file the page shows under the headers, to recognise it by. */
export const FIRST_ROWS = 10;

export interface UploadSample {
  headers: string[];
  rows: string[][];
  encoding: string;
  delimiter: string;
}

/**
 * The header row and the first rows of an upload, read as an import reads
 * them (encoding and delimiter detected, blank lines skipped). A file that is
 * not text, is empty or has no record is refused with one line (422): no
 * import could read it either. The cells go to the page only, never to a log.
 */
export async function readUploadSample(file: string, rows = FIRST_ROWS): Promise<UploadSample> {
  try {
    const { records, encoding, delimiter } = await readFirstRecords(file, rows);
    const [headers, ...first] = records;
    if (!headers) throw new ImportFileError("file_empty", "the file holds no record");
    return { headers, rows: first, encoding, delimiter };
  } catch (err) {
    if (err instanceof ImportFileError) {
      // The import's messages name the file by its path on this machine: the sender knows it by another name.
      const why = err.message.replace(file, "the file");
      throw new OpsHttpError(422, "ops_upload_not_csv", `not a text CSV file: ${why}`);
    }
    throw err;
  }
}

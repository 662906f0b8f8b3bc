import { open } from "node:fs/promises";
import { ImportFileError, readFirstRecords } from "../../imports/index.ts";
import { rejectColumnCount } from "../../imports/rejects-file.ts";
import { OpsHttpError } from "../ops-http-error.ts";

/** Rows of the file the page shows under the headers, to recognise it by. */
export const FIRST_ROWS = 10;

export interface UploadSample {
  headers: string[];
  rows: string[][];
  encoding: string;
  delimiter: string;
  /**
   * The file is a rejects file (its header starts with `_source_row,_reject_reason`):
   * an import drops those columns and restores the cells, so `headers` and
   * `rows` are shown as the import reads them.
   */
  rejectsFile: boolean;
}

/** Enough of the file to hold its header row. */
const HEAD_BYTES = 64 * 1024;

/** Whether the file's first line is a rejects file's header, read as it is (the import's reader restores it). */
async function startsAsRejectsFile(file: string, encoding: string, delimiter: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(HEAD_BYTES), 0, HEAD_BYTES, 0);
    let text: string;
    try {
      text = new TextDecoder(encoding).decode(buffer.subarray(0, bytesRead));
    } catch {
      return false;
    }
    const line = text.replace(/^\uFEFF/, "").split(/\r?\n/, 1)[0] ?? "";
    const cells = line.split(delimiter).map((c) => c.trim().replace(/^"(.*)"$/, "$1"));
    return rejectColumnCount(cells) > 0;
  } finally {
    await handle.close();
  }
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
    return {
      headers,
      rows: first,
      encoding,
      delimiter,
      rejectsFile: await startsAsRejectsFile(file, encoding, delimiter),
    };
  } catch (err) {
    if (err instanceof ImportFileError) {
      // The import's messages name the file by its path on this machine: the sender knows it by another name.
      const why = err.message.replace(file, "the file");
      throw new OpsHttpError(422, "ops_upload_not_csv", `not a text CSV file: ${why}`);
    }
    throw err;
  }
}

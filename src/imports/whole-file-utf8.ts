import { isUtf8 } from "node:buffer";
import { open } from "node:fs/promises";
import type { SourceOptions } from "../config/import-job.ts";
import {
  countUtf8Evidence,
  type DetectedEncoding,
  detectEncoding,
  lyingBomNote,
  mostlyUtf8,
  type Utf8Evidence,
} from "./decode.ts";

const READ_BYTES = 1 << 20;

/** Bytes at the end of `bytes` that start a character the next read completes: 0 to 3. */
function cutTail(bytes: Uint8Array): number {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const c = bytes[bytes.length - back] as number;
    if ((c & 0xc0) === 0x80) continue;
    const need = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/**
 * Calls `each` with the file's bytes from `start` in reads of a megabyte,
 * each ending on a character boundary as far as UTF-8 goes; `each` returns
 * false to stop early.
 */
async function eachRead(file: string, start: number, each: (bytes: Uint8Array) => boolean): Promise<void> {
  const fh = await open(file, "r");
  try {
    const buf = Buffer.allocUnsafe(READ_BYTES + 3);
    let carried = 0;
    let position = start;
    for (;;) {
      const { bytesRead } = await fh.read(buf, carried, READ_BYTES, position);
      position += bytesRead;
      const filled = carried + bytesRead;
      const tail = bytesRead === 0 ? 0 : cutTail(buf.subarray(0, filled));
      if (filled - tail > 0 && !each(buf.subarray(0, filled - tail))) return;
      if (bytesRead === 0) return;
      buf.copy(buf, 0, filled - tail, filled);
      carried = tail;
    }
  } finally {
    await fh.close();
  }
}

/**
 * Whether a file whose first bytes read as UTF-8 is UTF-8 throughout. A CRM
 * export's first accented letter may come megabytes in, after rows of plain
 * ASCII that every encoding reads alike: only the whole file tells UTF-8
 * from Windows-1252. Valid UTF-8, nearly every file this is asked about,
 * costs one read and one native check a megabyte. A file with bytes that are
 * not UTF-8 is read once more to weigh them, as detectEncoding weighs a
 * sample: mostly valid sequences mean UTF-8 with corrupt bytes (their rows
 * are rejected), else it is another encoding.
 */
async function isUtf8Throughout(file: string, start: number): Promise<boolean> {
  let valid = true;
  await eachRead(file, start, (bytes) => {
    valid = isUtf8(bytes);
    return valid;
  });
  if (valid) return true;
  const evidence: Utf8Evidence = { valid: 0, invalid: 0 };
  await eachRead(file, start, (bytes) => {
    countUtf8Evidence(bytes, evidence);
    return true;
  });
  return mostlyUtf8(evidence);
}

/**
 * The file's encoding: the sample's, as detectEncoding reads it, unless the
 * sample reads as UTF-8 and the rest of the file does not. Rows of plain
 * ASCII read alike in every encoding: past the sample, the rest of the file
 * decides. A UTF-8 byte-order mark does not settle it either: a mark over
 * Windows-1252 text is dropped.
 */
export async function fileEncoding(
  file: string,
  sample: Buffer,
  size: number,
  requested: SourceOptions["encoding"],
): Promise<DetectedEncoding> {
  const detected = await detectEncoding(sample, requested);
  const provisional = requested === "auto" && detected.encoding === "utf-8";
  if (!provisional || size <= sample.length || (await isUtf8Throughout(file, detected.bomLength))) {
    return detected;
  }
  return detected.bomLength > 0
    ? { encoding: "windows-1252", bomLength: detected.bomLength, note: lyingBomNote("windows-1252") }
    : { encoding: "windows-1252", bomLength: 0 };
}

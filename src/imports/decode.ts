import type { SourceOptions } from "../config/import-job.ts";
import { ImportFileError } from "./import-error.ts";
import type { Encoding } from "./text-streams.ts";

export type { Encoding } from "./text-streams.ts";

// chardet and iconv-lite load when a file needs them: most files are UTF-8, which needs neither, and
// their tables held ~5 MB of a 1M-row import's memory for nothing.
const loadChardet = async () => (await import("chardet")).default;
const loadIconv = async () => (await import("iconv-lite")).default;

export interface DetectedEncoding {
  encoding: Encoding;
  /** Bytes of byte-order mark at the start of the file: skipped, whatever the encoding read. */
  bomLength: number;
  /** What the report should say about it: a byte-order mark that the text disagrees with. */
  note?: string;
}

/** The note of a UTF-8 byte-order mark over text that is not UTF-8. */
export function lyingBomNote(encoding: Encoding): string {
  return `the file starts with a UTF-8 byte-order mark, but its text is not UTF-8: read as ${encoding}, the mark dropped`;
}

function isValidUtf8Prefix(sample: Buffer): boolean {
  // The sample may end inside a character: drop up to three trailing bytes of an unfinished one.
  let end = sample.length;
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const b = sample[end - back] as number;
    if ((b & 0xc0) === 0xc0) {
      end -= back;
      break;
    }
    if ((b & 0x80) === 0) break;
  }
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(sample.subarray(0, end));
    return true;
  } catch {
    return false;
  }
}

/** Valid multi-byte UTF-8 sequences, and runs of bytes that are not part of one, in some bytes. */
export interface Utf8Evidence {
  valid: number;
  invalid: number;
}

/**
 * Counts what speaks for and against UTF-8 in `bytes`, adding to `into`. A
 * character cut by the end of `bytes` counts as neither.
 */
export function countUtf8Evidence(
  bytes: Uint8Array,
  into: Utf8Evidence = { valid: 0, invalid: 0 },
): Utf8Evidence {
  // Runs of bad bytes count once: a corrupt stretch is one accident.
  let inRun = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      inRun = false;
      continue;
    }
    const len = b >= 0xf5 ? 0 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 ? 2 : 0;
    if (len > 0 && i + len > bytes.length) break;
    let ok = len > 0;
    for (let k = 1; ok && k < len; k++) ok = ((bytes[i + k] as number) & 0xc0) === 0x80;
    if (ok) {
      into.valid++;
      inRun = false;
      i += len - 1;
    } else if (!inRun) {
      into.invalid++;
      inRun = true;
    }
  }
  return into;
}

/**
 * UTF-8 with a few corrupt bytes is still UTF-8: decoding it all as
 * Windows-1252 would garble every accented letter. The corrupt bytes become
 * U+001A (see guardUtf8) and reject their rows instead.
 */
export function mostlyUtf8(evidence: Utf8Evidence): boolean {
  return evidence.valid > evidence.invalid;
}

/** What reading a sample as UTF-16 in one byte order gives. */
interface Utf16Reading {
  units: number;
  /** Tab, line ends and printable ASCII: a CSV's delimiters, quotes and line ends are among them. */
  ascii: number;
  /** NUL, other control characters, lone surrogates and non-characters: not text. */
  bad: number;
}

function readUtf16(sample: Buffer, bytes: number, littleEndian: boolean): Utf16Reading {
  let ascii = 0;
  let bad = 0;
  // A pair cut off by the end of the sample is not held against it.
  let pendingHigh = false;
  const units = bytes / 2;
  for (let i = 0; i < bytes; i += 2) {
    const u = littleEndian ? sample.readUInt16LE(i) : sample.readUInt16BE(i);
    if (pendingHigh) {
      pendingHigh = false;
      if (u >= 0xdc00 && u <= 0xdfff) continue;
      bad++;
    }
    if (u >= 0x20 && u < 0x7f) ascii++;
    else if (u === 0x09 || u === 0x0a || u === 0x0d) ascii++;
    else if (u < 0x20 || u === 0x7f || u === 0xfffe || u === 0xffff) bad++;
    else if (u >= 0xd800 && u <= 0xdbff) pendingHigh = true;
    else if (u >= 0xdc00 && u <= 0xdfff) bad++;
  }
  return { units, ascii, bad };
}

/**
 * UTF-16 without a BOM. Text in UTF-8 or Windows-1252 never holds a NUL byte;
 * UTF-16 holds one in every ASCII character (each delimiter, quote and line
 * end), however much of the text is CJK. Both byte orders are read: the right
 * one is text whose structure is ASCII, while the wrong one turns ASCII into
 * U+xx00 and lands much CJK among surrogates. Random binary fails both (lone
 * surrogates, controls). chardet does not help here: it only knows UTF-16 by
 * its BOM.
 */
function utf16Guess(sample: Buffer): Encoding | undefined {
  const bytes = Math.min(sample.length, 65_536) & ~1;
  if (bytes < 4 || !sample.subarray(0, bytes).includes(0)) return undefined;
  const le = readUtf16(sample, bytes, true);
  const be = readUtf16(sample, bytes, false);
  const [best, other, encoding] =
    le.ascii >= be.ascii ? [le, be, "utf-16le" as const] : [be, le, "utf-16be" as const];
  const text = best.bad <= best.units * 0.005 && best.ascii > other.ascii;
  return text ? encoding : undefined;
}

/** Control bytes that no text encoding we read would put in a CSV. */
function looksBinary(sample: Buffer): boolean {
  const n = Math.min(sample.length, 65_536);
  let bad = 0;
  for (let i = 0; i < n; i++) {
    const b = sample[i] as number;
    if (b === 0) return true;
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) bad++;
  }
  return bad > Math.max(8, n * 0.01);
}

/**
 * Picks the encoding of a file from its first bytes: a BOM decides; else valid
 * UTF-8 is UTF-8; else chardet's UTF-16 verdict, or Windows-1252 (what Excel
 * writes on Western systems, and a superset of Latin-1's printable range).
 */
export async function detectEncoding(
  sample: Buffer,
  requested: SourceOptions["encoding"],
): Promise<DetectedEncoding> {
  let bom: DetectedEncoding | undefined;
  if (sample[0] === 0xef && sample[1] === 0xbb && sample[2] === 0xbf)
    bom = { encoding: "utf-8", bomLength: 3 };
  else if (sample[0] === 0xff && sample[1] === 0xfe) bom = { encoding: "utf-16le", bomLength: 2 };
  else if (sample[0] === 0xfe && sample[1] === 0xff) bom = { encoding: "utf-16be", bomLength: 2 };

  if (requested !== "auto") {
    // Any mark is dropped: a UTF-8 mark read as windows-1252 would be "ï»¿" in the first header.
    if (!requested.startsWith("utf-16") && looksBinary(sample.subarray(bom?.bomLength ?? 0))) throw binary();
    return { encoding: requested, bomLength: bom?.bomLength ?? 0 };
  }
  if (bom?.encoding === "utf-8") {
    // A UTF-8 mark over Windows-1252 text (Outlook's CSV from Google): the bytes decide, the mark goes.
    const body = sample.subarray(3);
    if (isValidUtf8Prefix(body) || mostlyUtf8(countUtf8Evidence(body))) return bom;
    if (looksBinary(body)) throw binary();
    return { encoding: "windows-1252", bomLength: 3, note: lyingBomNote("windows-1252") };
  }
  if (bom) return bom;
  const utf16 = utf16Guess(sample);
  if (utf16) return { encoding: utf16, bomLength: 0 };
  if (looksBinary(sample)) throw binary();
  if (isValidUtf8Prefix(sample) || mostlyUtf8(countUtf8Evidence(sample)))
    return { encoding: "utf-8", bomLength: 0 };
  const guess = ((await loadChardet()).detect(sample) ?? "").toUpperCase();
  if (guess === "UTF-16LE") return { encoding: "utf-16le", bomLength: 0 };
  if (guess === "UTF-16BE") return { encoding: "utf-16be", bomLength: 0 };
  return { encoding: "windows-1252", bomLength: 0 };
}

function binary(): ImportFileError {
  return new ImportFileError(
    "file_binary",
    "the file is not text (it holds NUL or control bytes): export it again as CSV",
  );
}

/** Decodes a sample for sniffing the delimiter and header. */
export async function decodeSample(sample: Buffer, detected: DetectedEncoding): Promise<string> {
  const bytes = sample.subarray(detected.bomLength);
  if (detected.encoding !== "utf-8")
    return (await loadIconv()).decode(bytes, detected.encoding, { stripBOM: true });
  // A byte-order mark the file has though its encoding was named (and so not counted in bomLength) is not text.
  const text = bytes.toString("utf8");
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

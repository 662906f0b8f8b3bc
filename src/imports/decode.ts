import { Transform } from "node:stream";
import chardet from "chardet";
import iconv from "iconv-lite";
import type { SourceOptions } from "../config/import-job.ts";
import { ImportFileError } from "./import-error.ts";

export type Encoding = "utf-8" | "utf-16le" | "utf-16be" | "windows-1252" | "latin1";

export interface DetectedEncoding {
  encoding: Encoding;
  /** Bytes of byte-order mark at the start of the file. */
  bomLength: number;
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
export function detectEncoding(sample: Buffer, requested: SourceOptions["encoding"]): DetectedEncoding {
  let bom: DetectedEncoding | undefined;
  if (sample[0] === 0xef && sample[1] === 0xbb && sample[2] === 0xbf)
    bom = { encoding: "utf-8", bomLength: 3 };
  else if (sample[0] === 0xff && sample[1] === 0xfe) bom = { encoding: "utf-16le", bomLength: 2 };
  else if (sample[0] === 0xfe && sample[1] === 0xff) bom = { encoding: "utf-16be", bomLength: 2 };

  if (requested !== "auto") {
    const bomMatches = bom !== undefined && bom.encoding === requested;
    if (!requested.startsWith("utf-16") && looksBinary(sample)) throw binary();
    return { encoding: requested, bomLength: bomMatches ? (bom?.bomLength ?? 0) : 0 };
  }
  if (bom) return bom;
  const utf16 = utf16Guess(sample);
  if (utf16) return { encoding: utf16, bomLength: 0 };
  if (looksBinary(sample)) throw binary();
  if (isValidUtf8Prefix(sample) || mostlyUtf8(countUtf8Evidence(sample)))
    return { encoding: "utf-8", bomLength: 0 };
  const guess = (chardet.detect(sample) ?? "").toUpperCase();
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

/** A stream decoding the file's bytes to text; undefined for UTF-8, which csv-parse reads natively. */
export function createDecoder(encoding: Encoding): Transform | undefined {
  if (encoding === "utf-8") return undefined;
  return createTextDecoder(iconv, Transform, encoding);
}

/**
 * Decodes a non-UTF-8 file. Windows-1252 leaves five bytes undefined, which
 * iconv-lite turns into U+FFFD; here they become U+001A, the control character
 * "substitute", because U+FFFD is a character a file may hold as data, while
 * a control character rejects its row as undecodable. Self-contained (its
 * modules are passed in).
 */
export function createTextDecoder(
  iconvLite: Pick<typeof iconv, "getDecoder">,
  TransformClass: typeof Transform,
  encoding: Exclude<Encoding, "utf-8">,
): Transform {
  const decoder = iconvLite.getDecoder(encoding, { stripBOM: true });
  const mark = (text: string) => (encoding === "windows-1252" ? text.replaceAll("\uFFFD", "\u001A") : text);
  return new TransformClass({
    encoding: "utf8",
    transform(chunk: Buffer, _enc, done) {
      const text = decoder.write(chunk);
      if (text) this.push(mark(text));
      done();
    },
    flush(done) {
      const text = decoder.end();
      if (text) this.push(mark(text));
      done();
    },
  });
}

/**
 * The bytes of a UTF-8 file, each byte that is not part of a valid sequence
 * replaced by 0x1A (U+001A, "substitute"). Decoders put U+FFFD there, which
 * would make a literal U+FFFD in the file — data — look undecodable; a control
 * character rejects its row instead, as before. Valid chunks, nearly all of
 * them, pass through untouched after one native check. Self-contained (its
 * modules are passed in).
 */
export async function* guardUtf8(
  bytes: AsyncIterable<Uint8Array>,
  isUtf8: (input: Uint8Array) => boolean,
): AsyncGenerator<Uint8Array> {
  const SUB = 0x1a;
  /** Bytes in a valid sequence starting at i, or 0. */
  const sequenceLength = (b: Uint8Array, i: number, end: number): number => {
    const c = b[i] as number;
    if (c < 0x80) return 1;
    const len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (len === 0 || i + len > end) return 0;
    const second = b[i + 1] as number;
    const low = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    const high = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    if (second < low || second > high) return 0;
    for (let k = 2; k < len; k++) if (((b[i + k] as number) & 0xc0) !== 0x80) return 0;
    return len;
  };
  const substitute = (b: Uint8Array): Uint8Array => {
    const out = new Uint8Array(b.length);
    let o = 0;
    for (let i = 0; i < b.length; ) {
      const len = sequenceLength(b, i, b.length);
      if (len === 0) {
        out[o++] = SUB;
        i++;
      } else {
        for (let k = 0; k < len; k++) out[o++] = b[i + k] as number;
        i += len;
      }
    }
    return out.subarray(0, o);
  };
  let carry: Uint8Array | undefined;
  for await (const chunk of bytes) {
    let b = chunk;
    if (carry) {
      b = new Uint8Array(carry.length + chunk.length);
      b.set(carry);
      b.set(chunk, carry.length);
      carry = undefined;
    }
    // A character cut by the end of the chunk waits for the rest of it.
    let end = b.length;
    for (let back = 1; back <= 3 && back <= b.length; back++) {
      const c = b[b.length - back] as number;
      if ((c & 0xc0) === 0x80) continue;
      const need = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 1;
      if (need > back) end = b.length - back;
      break;
    }
    if (end < b.length) {
      carry = b.slice(end);
      b = b.subarray(0, end);
    }
    if (b.length > 0) yield isUtf8(b) ? b : substitute(b);
  }
  if (carry) yield substitute(carry);
}

/** Decodes a sample for sniffing the delimiter and header. */
export function decodeSample(sample: Buffer, detected: DetectedEncoding): string {
  return iconv.decode(sample.subarray(detected.bomLength), detected.encoding, { stripBOM: true });
}

import type { Transform } from "node:stream";
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

/**
 * UTF-8 with a few corrupt bytes is still UTF-8: decoding it all as
 * Windows-1252 would garble every accented letter. The corrupt bytes become
 * U+FFFD and reject their rows instead.
 */
function mostlyUtf8(sample: Buffer): boolean {
  let valid = 0;
  // Runs of bad bytes count once: a corrupt stretch is one accident.
  let invalid = 0;
  let inRun = false;
  for (let i = 0; i < sample.length; i++) {
    const b = sample[i] as number;
    if (b < 0x80) {
      inRun = false;
      continue;
    }
    const len = b >= 0xf5 ? 0 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 ? 2 : 0;
    let ok = len > 0 && i + len <= sample.length;
    for (let k = 1; ok && k < len; k++) ok = ((sample[i + k] as number) & 0xc0) === 0x80;
    if (ok) {
      valid++;
      inRun = false;
      i += len - 1;
    } else if (!inRun) {
      invalid++;
      inRun = true;
    }
  }
  return valid > invalid;
}

/** UTF-16 without a BOM shows as NULs in every other byte of ASCII text. */
function utf16Guess(sample: Buffer): Encoding | undefined {
  const n = Math.min(sample.length, 4096) & ~1;
  if (n < 4) return undefined;
  let evenNul = 0;
  let oddNul = 0;
  for (let i = 0; i < n; i += 2) {
    if (sample[i] === 0) evenNul++;
    if (sample[i + 1] === 0) oddNul++;
  }
  const pairs = n / 2;
  if (oddNul > pairs * 0.4 && evenNul < pairs * 0.05) return "utf-16le";
  if (evenNul > pairs * 0.4 && oddNul < pairs * 0.05) return "utf-16be";
  return undefined;
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
  if (isValidUtf8Prefix(sample) || mostlyUtf8(sample)) return { encoding: "utf-8", bomLength: 0 };
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
  return iconv.decodeStream(encoding, { stripBOM: true }) as unknown as Transform;
}

/** Decodes a sample for sniffing the delimiter and header. */
export function decodeSample(sample: Buffer, detected: DetectedEncoding): string {
  return iconv.decode(sample.subarray(detected.bomLength), detected.encoding, { stripBOM: true });
}

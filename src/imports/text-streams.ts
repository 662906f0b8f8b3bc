/**
 * The two byte-to-text steps the parse worker needs on every file: both take
 * their modules as arguments, and this module imports nothing at run time,
 * so the worker starts without loading iconv-lite, chardet or the errors.
 */
import type { Transform } from "node:stream";
import type iconv from "iconv-lite";

/** The encodings an import reads (decode.ts detects which). */
export type Encoding = "utf-8" | "utf-16le" | "utf-16be" | "windows-1252" | "latin1";

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

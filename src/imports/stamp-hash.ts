/**
 * The 64-bit hash of change-only stamps (sent-state.ts), over a text's UTF-8
 * bytes. TextEncoder.encodeInto copies a string's bytes into a scratch
 * buffer natively, and the mixing then takes eight bytes a step in two
 * lanes: about a third of the time of mixing UTF-16 code units two at a
 * time (stamps were ~9% of a first import's main thread that way). The words
 * are a stored format: changing this function needs a new SENT_STATE_FORMAT.
 */

const encoder = new TextEncoder();
let scratch = new Uint8Array(4096);

/** Room for `chars` UTF-16 code units as UTF-8 from `from` on (at most 3 bytes each). */
function reserve(from: number, chars: number): Uint8Array {
  const need = from + chars * 3;
  if (need > scratch.length) {
    const grown = new Uint8Array(Math.max(need, scratch.length * 2));
    grown.set(scratch.subarray(0, from));
    scratch = grown;
  }
  return scratch;
}

function fmix32(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return x ^ (x >>> 16);
}

/** A little-endian word of `b` at `i`, read byte by byte so that every host gets the same stamps. */
function word(b: Uint8Array, i: number): number {
  return (
    (b[i] as number) |
    ((b[i + 1] as number) << 8) |
    ((b[i + 2] as number) << 16) |
    ((b[i + 3] as number) << 24)
  );
}

/**
 * MurmurHash3's block mixing in two 32-bit lanes that feed each other every
 * step (as its x86 128-bit variant does), so a change anywhere reaches both
 * words: two different byte strings agree with odds of about 2⁻⁶⁴.
 */
function mix(b: Uint8Array, n: number, seed: number, out: Uint32Array, at: number): void {
  let h1 = seed | 0;
  let h2 = (seed ^ 0x9e3779b9) | 0;
  const whole = n & ~7;
  for (let i = 0; i < whole; i += 8) {
    let k1 = word(b, i);
    let k2 = word(b, i + 4);
    k1 = Math.imul(k1, 0xcc9e2d51);
    k1 = (k1 << 15) | (k1 >>> 17);
    h1 ^= Math.imul(k1, 0x1b873593);
    h1 = (h1 << 19) | (h1 >>> 13);
    h1 = (h1 + h2) | 0;
    h1 = (Math.imul(h1, 5) + 0x561ccd1b) | 0;
    k2 = Math.imul(k2, 0x1b873593);
    k2 = (k2 << 16) | (k2 >>> 16);
    h2 ^= Math.imul(k2, 0xcc9e2d51);
    h2 = (h2 << 17) | (h2 >>> 15);
    h2 = (h2 + h1) | 0;
    h2 = (Math.imul(h2, 5) + 0x0bcaa747) | 0;
  }
  let k1 = 0;
  let k2 = 0;
  for (let i = n - 1; i >= whole; i--) {
    if (i - whole >= 4) k2 = (k2 << 8) | (b[i] as number);
    else k1 = (k1 << 8) | (b[i] as number);
  }
  k1 = Math.imul(k1, 0xcc9e2d51);
  k1 = (k1 << 15) | (k1 >>> 17);
  h1 ^= Math.imul(k1, 0x1b873593);
  k2 = Math.imul(k2, 0x1b873593);
  k2 = (k2 << 16) | (k2 >>> 16);
  h2 ^= Math.imul(k2, 0xcc9e2d51);
  h1 ^= n;
  h2 ^= n;
  h1 = (h1 + h2) | 0;
  h2 = (h2 + h1) | 0;
  h1 = fmix32(h1);
  h2 = fmix32(h2);
  h1 = (h1 + h2) | 0;
  h2 = (h2 + h1) | 0;
  out[at] = h1;
  out[at + 1] = h2;
}

/** The hash of `text`'s UTF-8 bytes, written as two words at `out[at]`, `out[at + 1]`. */
export function hash64(text: string, seed: number, out: Uint32Array, at: number): void {
  const b = reserve(0, text.length);
  mix(b, encoder.encodeInto(text, b).written, seed, out, at);
}

/** The scratch buffer from `from` on, kept while neither changes: a new view a call was most of a stamp's garbage. */
let tail = scratch.subarray(1);

function scratchFrom(from: number): Uint8Array {
  if (tail.buffer !== scratch.buffer || tail.byteOffset !== from) tail = scratch.subarray(from);
  return tail;
}

/**
 * The hash of `first`, a NUL byte and `second`, the same as hash64 of the
 * joined text without making it (one string fewer a person).
 */
export function hash64Pair(first: string, second: string, seed: number, out: Uint32Array, at: number): void {
  let b = reserve(0, first.length + 1);
  // Most people have no population: nothing to encode.
  const n = first === "" ? 0 : encoder.encodeInto(first, b).written;
  b[n] = 0;
  b = reserve(n + 1, second.length);
  const end = n + 1 + encoder.encodeInto(second, scratchFrom(n + 1)).written;
  mix(b, end, seed, out, at);
}

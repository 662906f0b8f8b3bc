import type { ImportPerson } from "../api/index.ts";
import type { BatchEntry } from "./batch.ts";
import { identifierKey } from "./rules/index.ts";
import { hash64, hash64Pair } from "./stamp-hash.ts";

/*
 * A person's stamp in the change-only state (sent-state.ts): where they are
 * kept and the digest of what was sent, and how stamps are packed and grouped
 * by bucket for the state's scripts (sent-state-scripts.ts).
 */

/**
 * One person's place in the state and the digest of what is sent, as four
 * 32-bit words: the field (two words, the first of which picks the bucket),
 * then the digest (two words); for a person merged from several rows, two
 * more: the digest of their first row's version (firstRowsStamp). Kept on the
 * person's batch entry until the service accepts it (BatchEntry.stamp).
 */
export type SentStamp = Uint32Array;

/** A person on the way to a batch, with the population its request carries. */
export interface PendingPerson {
  population: string | null;
  entry: BatchEntry;
  /** The identifier's value (map-row.ts identifierKey), when the read phase handed it on: saves parsing the person. */
  key?: string | undefined;
  /** For a version merged from several rows: the JSON of the person's first row alone, as it was batched. */
  first?: string | undefined;
  /** The stamp of a person of one row so far, made where the row was mapped (chunk-mapper.ts, stampInto). */
  stamp?: SentStamp | undefined;
}

/** Seeds of the two hashes of a stamp, so that the field and the digest of one text differ. */
const WHO_SEED = 0x5eed0001;
const WHAT_SEED = 0x5eed0002;

/** The person's stamp; undefined only for a person without identifier, which validation never lets through. */
export function stampOf(pending: PendingPerson, identifier: string): SentStamp | undefined {
  if (pending.stamp !== undefined && pending.first === undefined) return pending.stamp;
  const key = pending.key ?? identifierKey(JSON.parse(pending.entry.person) as ImportPerson, identifier);
  if (key === undefined) return undefined;
  const stamp = new Uint32Array(pending.first === undefined ? 4 : 6);
  stampInto(pending.population, key, pending.entry.person, stamp, 0);
  if (pending.first !== undefined) hash64(pending.first, WHAT_SEED, stamp, 4);
  return stamp;
}

/** The four words of the stamp of `person` (its JSON) with this population and identifier value, at `out[at]`. */
export function stampInto(
  population: string | null,
  key: string,
  person: string,
  out: Uint32Array,
  at: number,
): void {
  hash64Pair(population ?? "", key, WHO_SEED, out, at);
  hash64(person, WHAT_SEED, out, at + 2);
}

/**
 * The pair a person merged from several rows also leaves: their field with
 * its last byte complemented (the same bucket, as COMPARE_BUCKETS asks it)
 * and the digest of their first row's version. Undefined for a person of one row.
 */
export function firstRowsStamp(stamp: SentStamp): SentStamp | undefined {
  if (stamp.length < 6) return undefined;
  return Uint32Array.of(stamp[0] as number, firstRowsWord(stamp), stamp[4] as number, stamp[5] as number);
}

/** The second word of a person's first-rows field: their field's, its last byte (the low one) complemented. */
function firstRowsWord(stamp: SentStamp): number {
  return ((stamp[1] as number) ^ 0xff) >>> 0;
}

/** Each stamp, and after it its first-rows pair when it has one: the pairs a write leaves. */
export function withFirstRows(stamps: readonly SentStamp[]): SentStamp[] {
  const out: SentStamp[] = [];
  for (const st of stamps) {
    out.push(st);
    const first = firstRowsStamp(st);
    if (first) out.push(first);
  }
  return out;
}

/** Field and digest of each stamp, 16 bytes a person, as the scripts take them. */
export function packed(list: readonly SentStamp[]): Buffer {
  const out = Buffer.allocUnsafe(list.length * 16);
  for (let i = 0; i < list.length; i++) {
    const st = list[i] as SentStamp;
    const at = i * 16;
    out.writeUInt32BE(st[0] as number, at);
    out.writeUInt32BE(st[1] as number, at + 4);
    out.writeUInt32BE(st[2] as number, at + 8);
    out.writeUInt32BE(st[3] as number, at + 12);
  }
  return out;
}

/** The bucket of `bits` a stamp's first word picks: its top bits. */
export function bucketOf(stamp: SentStamp, bits: number): number {
  return bits === 0 ? 0 : (stamp[0] as number) >>> (32 - bits);
}

/**
 * Stamps ordered by bucket, as COMPARE_BUCKETS takes them: the buckets met,
 * how many stamps each (two bytes each), the stamps packed in that order, and
 * for each place in that order the index of its stamp in `stamps`.
 */
export function groupByBucket(
  stamps: readonly SentStamp[],
  bits: number,
): { buckets: number[]; counts: Buffer; packed: Buffer; order: number[] } {
  const of = stamps.map((st) => bucketOf(st, bits));
  const order = stamps.map((_st, i) => i).sort((a, b) => (of[a] as number) - (of[b] as number) || a - b);
  const buckets: number[] = [];
  const sizes: number[] = [];
  for (const i of order) {
    const b = of[i] as number;
    if (buckets.at(-1) === b) sizes[sizes.length - 1] = (sizes.at(-1) as number) + 1;
    else {
      buckets.push(b);
      sizes.push(1);
    }
  }
  const counts = Buffer.allocUnsafe(sizes.length * 2);
  for (let k = 0; k < sizes.length; k++) counts.writeUInt16BE(sizes[k] as number, k * 2);
  return { buckets, counts, packed: packed(order.map((i) => stamps[i] as SentStamp)), order };
}

/** Stamps in the order they were recorded, 16 bytes a person in slabs that never move. */
export class StampLog {
  static readonly SLAB_PEOPLE = 16_384;
  readonly #slabs: Uint32Array[] = [];
  #length = 0;

  get length(): number {
    return this.#length;
  }

  /** The stamp's pair, and its first-rows pair when it has one (firstRowsStamp). */
  push(stamp: SentStamp): void {
    this.#pushPair(stamp[0] as number, stamp[1] as number, stamp[2] as number, stamp[3] as number);
    if (stamp.length >= 6)
      this.#pushPair(stamp[0] as number, firstRowsWord(stamp), stamp[4] as number, stamp[5] as number);
  }

  #pushPair(w0: number, w1: number, w2: number, w3: number): void {
    const at = this.#length % StampLog.SLAB_PEOPLE;
    if (at === 0) this.#slabs.push(new Uint32Array(StampLog.SLAB_PEOPLE * 4));
    const slab = this.#slabs.at(-1) as Uint32Array;
    slab[at * 4] = w0;
    slab[at * 4 + 1] = w1;
    slab[at * 4 + 2] = w2;
    slab[at * 4 + 3] = w3;
    this.#length++;
  }

  /** A log of the stamps gathered so far, this one left empty: what records add meanwhile stays here. */
  detach(): StampLog {
    const out = new StampLog();
    out.#slabs.push(...this.#slabs.splice(0));
    out.#length = this.#length;
    this.#length = 0;
    return out;
  }

  /** Word `w` (0–3) of the i-th stamp. */
  word(i: number, w: number): number {
    const slab = this.#slabs[Math.floor(i / StampLog.SLAB_PEOPLE)] as Uint32Array;
    return slab[(i % StampLog.SLAB_PEOPLE) * 4 + w] as number;
  }

  /**
   * The stamps grouped by bucket of `bits`, each group in the order recorded,
   * a part of up to `atOnce` people (a bucket is never split between parts):
   * the buckets, how many stamps each, and the stamps packed as the scripts take them.
   */
  *byBucket(
    bits: number,
    atOnce: number,
  ): Generator<{ buckets: number[]; counts: number[]; packed: Buffer }> {
    const n = this.#length;
    const bucketOf = (i: number) => (bits === 0 ? 0 : this.word(i, 0) >>> (32 - bits));
    const starts = new Uint32Array(2 ** bits + 1);
    for (let i = 0; i < n; i++) (starts[bucketOf(i) + 1] as number)++;
    for (let b = 1; b < starts.length; b++) starts[b] = (starts[b] as number) + (starts[b - 1] as number);
    const order = new Uint32Array(n);
    const next = starts.slice(0, -1);
    for (let i = 0; i < n; i++) {
      const b = bucketOf(i);
      order[next[b] as number] = i;
      next[b] = (next[b] as number) + 1;
    }
    let b = 0;
    while (b < 2 ** bits) {
      const buckets: number[] = [];
      const counts: number[] = [];
      const from = starts[b] as number;
      let to = from;
      while (b < 2 ** bits && (to === from || (starts[b + 1] as number) - from <= atOnce)) {
        const count = (starts[b + 1] as number) - (starts[b] as number);
        if (count > 0) {
          buckets.push(b);
          counts.push(count);
        }
        to = starts[b + 1] as number;
        b++;
      }
      if (buckets.length === 0) continue;
      const packed = Buffer.allocUnsafe((to - from) * 16);
      for (let k = from; k < to; k++) {
        const i = order[k] as number;
        for (let w = 0; w < 4; w++) packed.writeUInt32BE(this.word(i, w), (k - from) * 16 + w * 4);
      }
      yield { buckets, counts, packed };
    }
  }
}

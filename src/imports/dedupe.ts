import type { ImportPerson } from "../api/index.ts";

let lastHigh = 0;
/**
 * 64 bits of hash (two 32-bit halves, cyrb53's mixing without the 53-bit fold);
 * the high half is left in `lastHigh` to spare an allocation per row. With a
 * million distinct keys two share a hash with probability ~3e-8, and even then
 * run-import compares the real keys before merging.
 */
function hash64(s: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  lastHigh = h2 >>> 0;
  return h1 >>> 0;
}

/**
 * The key rows are deduplicated on: the population and the identifier's value.
 * The service matches people within the population of the request, so the
 * same email in two populations is two people. The population goes first,
 * length-prefixed, so no (population, identifier) pair can spell another's
 * key; no population (workspace-wide) is a scope of its own.
 */
export function dedupeKey(population: string | null, identifier: string): string {
  return population === null
    ? `\u0000${identifier}`
    : `${population.length}:${population}\u0000${identifier}`;
}

/** Fewest slots a table starts with. */
const MIN_SLOTS = 1 << 14;
/** Filled beyond this share, the table doubles; sized ahead, it starts at PRESIZED_LOAD. */
const MAX_LOAD = 0.7;
const PRESIZED_LOAD = 0.6;
/** A presize larger than this many keys (~80 MB) is not trusted: the table grows to it instead. */
const MAX_PRESIZED_KEYS = 1 << 22;

/**
 * Identifier → last sequence number, in typed arrays: 12 bytes a slot instead
 * of a Map's ~100 bytes a string key. Open addressing with linear probing,
 * any number of slots (not only powers of two, so a table sized for the file
 * is not rounded up to twice that). Reserved for the file's row estimate,
 * a million people take ~20 MB.
 */
export class KeyIndex {
  #cap = 0;
  #lo = new Uint32Array(0);
  #hi = new Uint32Array(0);
  // seq + 1, so the zeroed arrays a table starts as are empty without a fill.
  #seq = new Int32Array(0);
  #size = 0;

  constructor() {
    this.#allocate(MIN_SLOTS);
  }

  /**
   * Sizes the table for `expectedKeys` (an estimate from the file's size; the
   * table still grows past it), so it does not double late, when the old and
   * the new tables would both be held at the first pass's peak.
   */
  reserve(expectedKeys: number): void {
    const cap = Math.ceil(Math.min(expectedKeys, MAX_PRESIZED_KEYS) / PRESIZED_LOAD);
    if (cap > this.#cap && this.#size <= cap * MAX_LOAD) this.#rehash(cap);
  }

  get size(): number {
    return this.#size;
  }

  /** Slots in the table (for tests and the memory reckoning). */
  get capacity(): number {
    return this.#cap;
  }

  /** Records `seq` as the latest row of `key`; returns the previous one, or -1. */
  put(key: string, seq: number): number {
    const lo = hash64(key);
    const hi = lastHigh;
    const cap = this.#cap;
    let i = ((lo ^ hi) >>> 0) % cap;
    for (;;) {
      const s = this.#seq[i] as number;
      if (s === 0) {
        this.#lo[i] = lo;
        this.#hi[i] = hi;
        this.#seq[i] = seq + 1;
        if (++this.#size > cap * MAX_LOAD) this.#rehash(cap * 2);
        return -1;
      }
      if (this.#lo[i] === lo && this.#hi[i] === hi) {
        this.#seq[i] = seq + 1;
        return s - 1;
      }
      i = i + 1 === cap ? 0 : i + 1;
    }
  }

  #allocate(cap: number): void {
    this.#cap = cap;
    this.#lo = new Uint32Array(cap);
    this.#hi = new Uint32Array(cap);
    this.#seq = new Int32Array(cap);
  }

  #rehash(slots: number): void {
    const { lo: oldLo, hi: oldHi, seq: oldSeq } = { lo: this.#lo, hi: this.#hi, seq: this.#seq };
    this.#allocate(slots);
    const cap = this.#cap;
    for (let j = 0; j < oldSeq.length; j++) {
      const s = oldSeq[j] as number;
      if (s === 0) continue;
      const lo = oldLo[j] as number;
      const hi = oldHi[j] as number;
      let i = ((lo ^ hi) >>> 0) % cap;
      while (this.#seq[i] !== 0) i = i + 1 === cap ? 0 : i + 1;
      this.#lo[i] = lo;
      this.#hi[i] = hi;
      this.#seq[i] = s;
    }
  }
}

/** Per spilled row: the earlier row of the same key, and whether a later one supersedes it. */
export class SeqLinks {
  #prev = new Int32Array(1024);
  #superseded = new Uint8Array(1024);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(prev: number): void {
    if (this.#length === this.#prev.length) {
      const p = new Int32Array(this.#prev.length * 2);
      p.set(this.#prev);
      this.#prev = p;
      const s = new Uint8Array(this.#superseded.length * 2);
      s.set(this.#superseded);
      this.#superseded = s;
    }
    this.#prev[this.#length++] = prev;
    if (prev >= 0) this.#superseded[prev] = 1;
  }

  prev(seq: number): number {
    return this.#prev[seq] as number;
  }

  isSuperseded(seq: number): boolean {
    return this.#superseded[seq] === 1;
  }
}

function union(
  a: readonly string[] | undefined,
  b: readonly string[] | undefined,
  exclude?: string,
): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const skip = exclude?.toLowerCase();
  for (const v of [...(a ?? []), ...(b ?? [])]) {
    const k = v.toLowerCase();
    if (seen.has(k) || k === skip) continue;
    seen.add(k);
    out.push(v);
  }
  return out;
}

type Property = NonNullable<ImportPerson["properties"]>[number];
const propertyKey = (p: Property) => ("propertyId" in p ? `id:${p.propertyId}` : `name:${p.name}`);

/**
 * Merges two rows of one person, `later` winning. Field by field: a field the
 * later row has (null included) replaces the earlier value; a field it omits
 * keeps the earlier one. Lists are unions, earlier items first. Properties
 * merge by propertyId or name, later winning. An earlier email or phone that
 * the later row replaced is kept in additionalEmails / additionalPhones, so no
 * contact detail is lost.
 */
export function mergePersons(earlier: ImportPerson, later: ImportPerson): ImportPerson {
  const out: ImportPerson = { ...earlier, ...later };
  const email = out.email;
  const phone = out.phone;
  const extraEmail =
    earlier.email && email && earlier.email.toLowerCase() !== email.toLowerCase() ? [earlier.email] : [];
  const extraPhone = earlier.phone && phone && earlier.phone !== phone ? [earlier.phone] : [];
  if (earlier.additionalEmails || later.additionalEmails || extraEmail.length) {
    out.additionalEmails = union(union(earlier.additionalEmails, extraEmail), later.additionalEmails, email);
  }
  if (earlier.additionalPhones || later.additionalPhones || extraPhone.length) {
    out.additionalPhones = union(union(earlier.additionalPhones, extraPhone), later.additionalPhones, phone);
  }
  if (earlier.properties && later.properties) {
    const byKey = new Map<string, Property>();
    for (const p of earlier.properties) byKey.set(propertyKey(p), p);
    for (const p of later.properties) byKey.set(propertyKey(p), p);
    out.properties = [...byKey.values()];
  }
  for (const k of ["additionalEmails", "additionalPhones"] as const) {
    if (out[k] && out[k].length === 0) delete out[k];
  }
  return out;
}

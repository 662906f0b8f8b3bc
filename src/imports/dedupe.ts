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

/**
 * Identifier → last sequence number, in typed arrays: 12 bytes a slot instead
 * of a Map's ~100 bytes a string key, so a million people cost ~25 MB.
 * Open addressing with linear probing; grows at half full.
 */
export class KeyIndex {
  #cap = 1 << 14;
  #lo = new Uint32Array(this.#cap);
  #hi = new Uint32Array(this.#cap);
  #seq = new Int32Array(this.#cap).fill(-1);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Records `seq` as the latest row of `key`; returns the previous one, or -1. */
  put(key: string, seq: number): number {
    const lo = hash64(key);
    const hi = lastHigh;
    const mask = this.#cap - 1;
    let i = (lo ^ hi) & mask;
    for (;;) {
      const s = this.#seq[i] as number;
      if (s === -1) {
        this.#lo[i] = lo;
        this.#hi[i] = hi;
        this.#seq[i] = seq;
        if (++this.#size * 2 > this.#cap) this.#grow();
        return -1;
      }
      if (this.#lo[i] === lo && this.#hi[i] === hi) {
        this.#seq[i] = seq;
        return s;
      }
      i = (i + 1) & mask;
    }
  }

  #grow(): void {
    const { lo: oldLo, hi: oldHi, seq: oldSeq } = { lo: this.#lo, hi: this.#hi, seq: this.#seq };
    this.#cap *= 2;
    this.#lo = new Uint32Array(this.#cap);
    this.#hi = new Uint32Array(this.#cap);
    this.#seq = new Int32Array(this.#cap).fill(-1);
    const mask = this.#cap - 1;
    for (let j = 0; j < oldSeq.length; j++) {
      const s = oldSeq[j] as number;
      if (s === -1) continue;
      const lo = oldLo[j] as number;
      const hi = oldHi[j] as number;
      let i = (lo ^ hi) & mask;
      while (this.#seq[i] !== -1) i = (i + 1) & mask;
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

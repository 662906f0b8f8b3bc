// The machinery that links a person's rows; the rules of when rows are one person, and of how their
// versions merge, are the mapping rules' (rules/merge-person.ts).

/**
 * 32 bits of hash: cyrb53's two lanes, mixed into the first. Two keys that
 * share it are linked as one person's rows by KeyIndex; the merge phase
 * compares the real keys along that chain (merge-phase.ts), so they stay two
 * people and the cost is a spilled row read again. A million distinct keys
 * make ~116 such pairs.
 */
export function hash32(s: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h1 ^ h2) >>> 0;
}

/** Fewest slots a table starts with. */
const MIN_SLOTS = 1 << 14;
/**
 * Filled beyond this share, the table doubles; sized ahead, it starts at
 * PRESIZED_LOAD. Linear probing this full still finds a slot within a cache
 * line or two (a slot is 8 bytes); a million people take ~11 MB at 0.75.
 */
const MAX_LOAD = 0.85;
const PRESIZED_LOAD = 0.75;
/** A presize larger than this many keys (~45 MB) is not trusted: the table grows to it instead. */
const MAX_PRESIZED_KEYS = 1 << 22;

/**
 * Identifier → last sequence number, in one typed array: 8 bytes a slot (the
 * key's 32-bit hash, then the sequence number), instead of a Map's ~100 bytes
 * a string key. Open addressing with linear probing, any number of slots (not
 * only powers of two, so a table sized for the file is not rounded up to twice
 * that). Reserved for the file's row estimate, a million people take ~11 MB.
 * Keys are known by their hash alone (hash32): two keys sharing one share a
 * chain of rows, which the merge phase tells apart.
 */
export class KeyIndex {
  #cap = 0;
  /** Slot i: [2i] the hash, [2i + 1] the sequence number plus one (0: empty, so a new table needs no fill). */
  #slots = new Uint32Array(0);
  #size = 0;

  constructor() {
    this.#allocate(MIN_SLOTS);
  }

  /**
   * Sizes the table for `expectedKeys` (an estimate from the file's size; the
   * table still grows past it), so it does not double late, when the old and
   * the new tables would both be held at the read's peak.
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

  /** Records `seq` as the latest row of `key`; returns the previous one (of `key` or a key sharing its hash), or -1. */
  put(key: string, seq: number): number {
    const h = hash32(key);
    const cap = this.#cap;
    const slots = this.#slots;
    let i = h % cap;
    for (;;) {
      const s = slots[2 * i + 1] as number;
      if (s === 0) {
        slots[2 * i] = h;
        slots[2 * i + 1] = seq + 1;
        if (++this.#size > cap * MAX_LOAD) this.#rehash(cap * 2);
        return -1;
      }
      if (slots[2 * i] === h) {
        slots[2 * i + 1] = seq + 1;
        return s - 1;
      }
      i = i + 1 === cap ? 0 : i + 1;
    }
  }

  #allocate(cap: number): void {
    this.#cap = cap;
    this.#slots = new Uint32Array(cap * 2);
  }

  #rehash(cap: number): void {
    const old = this.#slots;
    this.#allocate(cap);
    const slots = this.#slots;
    for (let j = 0; j < old.length; j += 2) {
      const s = old[j + 1] as number;
      if (s === 0) continue;
      const h = old[j] as number;
      let i = h % cap;
      while (slots[2 * i + 1] !== 0) i = i + 1 === cap ? 0 : i + 1;
      slots[2 * i] = h;
      slots[2 * i + 1] = s;
    }
  }
}

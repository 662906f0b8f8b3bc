import { SPEC_DEFAULTS } from "../api/decisions.ts";

/** One person ready to send, with the rows it came from (more than one when duplicates merged). */
export interface BatchEntry {
  rows: number[];
  /** JSON of the person. */
  person: string;
  /** Sequence number of this version of the person in the spill (merge-phase.ts). */
  seq?: number;
  /** The person's change-only stamp (sent-state.ts), recorded once the service accepts them. */
  stamp?: Uint32Array;
}

export interface Batch {
  /** 0-based, in the order batches are cut; the same file, definition and sizes give the same numbering. */
  index: number;
  population: string | null;
  entries: BatchEntry[];
  /**
   * Batches that carry an earlier version of one of this batch's people: this
   * one is sent only after they are answered, so the service applies the
   * versions in file order and ends with the merged one.
   */
  after: number[];
}

/** How many people batch `index` takes, or undefined while that is not decided (nothing is cut). */
export type BatchSizes = (index: number) => number | undefined;

interface OpenList {
  id: number;
  population: string | null;
  entries: BatchEntry[];
  after: Set<number>;
}

/**
 * Groups people into requests, one population per request (the request
 * carries one population id), cut when a population's list reaches the size
 * of the next batch. A later version of a person still waiting in an open
 * list replaces the earlier one in place; one whose earlier version is in a
 * batch already cut joins the open list, and that batch becomes one to wait for.
 * A version still in an open list can be withdrawn (`withdraw`) when a later
 * one turns out to need no sending.
 */
export class Batcher {
  #sizes: BatchSizes;
  #open = new Map<string, OpenList>();
  /**
   * Per spill sequence number: the list its entry joined, plus one (0: in
   * none, or withdrawn), negated when an earlier version of the person is in
   * a batch already cut — the service may hold that version, so this one must
   * go out even if a later one is what the last run sent. One array, not two,
   * of 2 bytes a row of the file while list numbers fit (a list is cut every
   * batch: ~1,000–2,000 lists a million rows), 4 bytes once they do not.
   */
  #listOf: Int16Array | Int32Array = new Int16Array(1024);
  /** Per open list id: the index of the batch it became, -1 while open. */
  #cutAs: number[] = [];
  #next = 0;

  constructor(sizes: BatchSizes) {
    this.#sizes = sizes;
  }

  /** The number the next batch cut will have. */
  get nextIndex(): number {
    return this.#next;
  }

  /** Changes the sizes (the plan was decided); cut() applies them. */
  setSizes(sizes: BatchSizes): void {
    this.#sizes = sizes;
  }

  /** Whether an earlier version (spill `seq`) of a person is in a batch of this run, open or cut (withdrawn: not). */
  batched(seq: number): boolean {
    return seq >= 0 && seq < this.#listOf.length && this.#listOf[seq] !== 0;
  }

  /** Whether the version of spill `seq` follows an earlier version in a batch already cut. */
  #followsCut(seq: number): boolean {
    return (this.#listOf[seq] as number) < 0;
  }

  /**
   * Cuts the next batch from the longest open list (the first such in the
   * order populations appeared), at most `most` people: the first request
   * of a run whose later sizes wait for its answer.
   */
  cutLongest(most: number): Batch | undefined {
    let longest: [string, OpenList] | undefined;
    for (const [key, list] of this.#open) {
      if (list.entries.length > (longest?.[1].entries.length ?? 0)) longest = [key, list];
    }
    if (!longest) return undefined;
    return this.#cut(longest[0], longest[1], Math.min(most, longest[1].entries.length));
  }

  /**
   * Adds an entry, `prevSeq` being the spill sequence number of the same
   * person's previous version (-1: none). Returns the batches now full.
   */
  add(population: string | null, entry: BatchEntry, prevSeq: number): Batch[] {
    const key = population ?? "";
    let list = this.#open.get(key);
    const previous =
      prevSeq >= 0 && prevSeq < this.#listOf.length ? Math.abs(this.#listOf[prevSeq] as number) - 1 : -1;
    if (previous >= 0 && this.#cutAs[previous] === -1 && list?.id === previous) {
      const at = list.entries.findIndex((e) => e.seq === prevSeq);
      if (at !== -1) {
        list.entries[at] = entry;
        this.#mark(entry, list.id, this.#followsCut(prevSeq));
        return [];
      }
    }
    if (list === undefined) {
      list = this.#newList(population);
      this.#open.set(key, list);
    }
    const cut = previous >= 0 && (this.#cutAs[previous] as number) >= 0;
    if (cut) list.after.add(this.#cutAs[previous] as number);
    list.entries.push(entry);
    this.#mark(entry, list.id, cut);
    return this.#cutFull(key);
  }

  /**
   * Takes the version of spill `seq` back out of its population's open list,
   * when it waits there and no earlier version of the person is in a batch
   * already cut: a later version needs no sending (the last run sent it), so
   * this one must not go either. Returns whether it did; when not, the later
   * version has to be sent (the earlier one is on its way or answered).
   */
  withdraw(population: string | null, seq: number): boolean {
    if (seq < 0 || seq >= this.#listOf.length || this.#followsCut(seq)) return false;
    const list = this.#open.get(population ?? "");
    if (list === undefined || this.#listOf[seq] !== list.id + 1) return false;
    const at = list.entries.findIndex((e) => e.seq === seq);
    if (at === -1) return false;
    list.entries.splice(at, 1);
    this.#listOf[seq] = 0;
    return true;
  }

  /** Cuts every list that holds a batch's worth (after the sizes changed). */
  cut(): Batch[] {
    const out: Batch[] = [];
    for (const key of [...this.#open.keys()]) out.push(...this.#cutFull(key));
    return out;
  }

  /** The partly filled batches, in the order their populations first appeared. Needs the sizes decided. */
  finish(): Batch[] {
    const out = this.cut();
    for (const [key, list] of this.#open) {
      if (list.entries.length > 0) out.push(this.#cut(key, list, list.entries.length));
    }
    this.#open.clear();
    return out;
  }

  #cutFull(key: string): Batch[] {
    const out: Batch[] = [];
    for (;;) {
      const list = this.#open.get(key);
      const size = this.#sizes(this.#next);
      if (list === undefined || size === undefined || list.entries.length < size) return out;
      out.push(this.#cut(key, list, size));
    }
  }

  /** The first `size` entries of `list` as the next batch; the rest, if any, stay open as a new list. */
  #cut(key: string, list: OpenList, size: number): Batch {
    const index = this.#next++;
    this.#cutAs[list.id] = index;
    this.#open.delete(key);
    const entries = list.entries.length === size ? list.entries : list.entries.slice(0, size);
    if (list.entries.length > size) {
      const rest = this.#newList(list.population);
      rest.entries = list.entries.slice(size);
      rest.after = new Set(list.after);
      for (const e of rest.entries) this.#mark(e, rest.id, e.seq !== undefined && this.#followsCut(e.seq));
      this.#open.set(key, rest);
    }
    return { index, population: list.population, entries, after: [...list.after].sort((a, b) => a - b) };
  }

  #newList(population: string | null): OpenList {
    const id = this.#cutAs.push(-1) - 1;
    return { id, population, entries: [], after: new Set() };
  }

  #mark(entry: BatchEntry, listId: number, followsCut: boolean): void {
    const seq = entry.seq;
    if (seq === undefined) return;
    const wide = listId + 1 > 0x7fff && this.#listOf instanceof Int16Array;
    if (wide || seq >= this.#listOf.length) {
      let size = this.#listOf.length;
      while (seq >= size) size *= 2;
      const grown = wide || this.#listOf instanceof Int32Array ? new Int32Array(size) : new Int16Array(size);
      grown.set(this.#listOf);
      this.#listOf = grown;
    }
    this.#listOf[seq] = followsCut ? -(listId + 1) : listId + 1;
  }
}

/**
 * The request body as UTF-8 bytes, built without re-serialising each person.
 * `person` texts are JSON of people checked against the contract's
 * ImportPerson as they were mapped (map-row.ts), with the identifier the
 * selector names present (the row was keyed by it), so the body is valid by
 * construction and goes out as is (CallInput.bodyText).
 * test/imports/batch-body.test.ts parses the bytes sent against ImportParticipantsBody.
 */
function batchBody(
  entries: readonly BatchEntry[],
  identifierField: string,
  identifier: string,
  populationField: string,
  population: string | null,
): Buffer {
  const pop = population === null ? "" : `,${JSON.stringify(populationField)}:${JSON.stringify(population)}`;
  const tail = `],${JSON.stringify(identifierField)}:${JSON.stringify(identifier)}${pop}}`;
  // UTF-8 takes at most three bytes per UTF-16 code unit.
  let most = 12 + tail.length * 3;
  for (let i = 0; i < entries.length; i++) most += ((entries[i] as BatchEntry).person.length + 1) * 3;
  if (scratch.length < most) scratch = Buffer.allocUnsafe(Math.max(most, scratch.length * 2));
  // Each person is encoded straight into the bytes: a body built as one string was a copy of every
  // person, a large object of the old generation, then encoded again on its way out.
  let at = scratch.write('{"people":[', 0, "latin1");
  for (let i = 0; i < entries.length; i++) {
    if (i > 0) scratch[at++] = 0x2c;
    at += scratch.write((entries[i] as BatchEntry).person, at, "utf8");
  }
  at += scratch.write(tail, at, "utf8");
  return Buffer.from(scratch.subarray(0, at));
}

/** Where bodies are built before they are copied out at their size: one buffer reused, not one a request. */
let scratch = Buffer.allocUnsafe(0);

/** batchBody with the field names the contract uses (SPEC_DEFAULTS). */
export function importBody(
  entries: readonly BatchEntry[],
  identifier: string,
  population: string | null,
): Buffer {
  return batchBody(
    entries,
    SPEC_DEFAULTS.importIdentifierField,
    identifier,
    SPEC_DEFAULTS.importPopulationField,
    population,
  );
}

import type { ImportPerson } from "../api/index.ts";
import type { Batch, BatchEntry, Batcher } from "./batch.ts";
import { mergePersons } from "./dedupe.ts";
import type { MaybePromise } from "./maybe-promise.ts";
import { identifierKey } from "./rules/index.ts";
import type { PendingPerson } from "./sent-stamps.ts";
import type { SieveVerdict } from "./sent-state.ts";
import type { SpilledRow, SpillWriter } from "./spill.ts";

export interface StreamMergeInput {
  /** Where each person's latest version goes, to be merged into when a later row of theirs comes. */
  spill: SpillWriter;
  /** The definition's target.identifier: email, phone or property:<id>. */
  identifier: string;
  batcher: Batcher;
  /** Change-only sending: people go through a sieve (set by `open`) before they are batched. */
  sieving: boolean;
  /** Hears of each person the sieve held back. */
  onUnchanged: (entry: BatchEntry) => void;
  /** Batches cut and not yet taken by the sender before reading pauses (asked each time: the run may raise it). */
  maxQueued: number | (() => number);
}

/** Says which of the people to send (sent-state.ts): the others are unchanged since the last run. */
export type Sieve = (people: readonly PendingPerson[]) => Promise<SieveVerdict[]>;

/** People given to the sieve at once unless `open` says otherwise (sent-state.ts's sieveAtOnce). */
const SIEVE_AT_ONCE = 2048;

interface Pending extends PendingPerson {
  prevSeq: number;
}

/** A person's latest version in the spill, with its sequence number and identifier's value. */
interface Version {
  seq: number;
  row: SpilledRow;
  key: string | undefined;
}

/**
 * Phase 2, merge duplicates while the file is read: the read phase hands
 * every valid person to `append` (it is the read phase's spill). A person's
 * first row becomes an entry at once; a later row is merged into the
 * person's latest version, read back from the spill (later values win,
 * earliest rows first), and the merged person is batched again: in place if
 * the earlier version still waits in an open batch, else as a new entry of a
 * batch that is sent only after the earlier one is answered (Batcher). So
 * the service ends with the merged data of all of a person's rows, and a
 * person met again after being sent is sent again. With a sieve, a version
 * the last run sent takes the person's earlier version back out of its open
 * batch (`#applySieved`): an unchanged person of several rows is not sent.
 * A first version that is what the person's first rows gave when last sent
 * is held back instead of batched, with the versions after it, until one
 * turns out unchanged (nothing is sent) or the file ends (the last is sent):
 * so a person whose rows lie a batch or more apart is not sent twice.
 *
 * Nothing is cut into batches until `open` says how large they are (after
 * the first rows, run-import.ts); from then on full batches queue for the
 * sender (`batches()`), and reading pauses while `maxQueued` wait. The same
 * file, definition and sizes always give the same batches, which is what
 * lets the ledger resume by index — unless a sieve leaves out people
 * unchanged since the last run (and withdraws their earlier versions), when
 * the numbering also depends on the change state: run-import.ts keeps such
 * runs apart, and a run that compares never resumes by index.
 */
export class StreamMerge {
  readonly #input: StreamMergeInput;
  #sieve: Sieve | undefined;
  #sieveAtOnce = SIEVE_AT_ONCE;
  #opened = false;
  #pending: Pending[] = [];
  #sieving: { people: Pending[]; send: Promise<SieveVerdict[]> } | undefined;
  #queue: Batch[] = [];
  /**
   * Per spill sequence number, 1 when that version of a person is held back:
   * their first rows are what the last run sent of them, their later rows
   * still to come. A byte a version and nothing else, so memory stays flat
   * however many are held: the end reads them back from the spill.
   */
  #held = new Uint8Array(1024);
  #heldCount = 0;
  /** Set while the end sends the held people: whatever the sieve says of them then, their rows are all read. */
  #releasing = false;
  #ended = false;
  #failure: { error: unknown } | undefined;
  /** Wakes the sender waiting for a batch. */
  #wakeSender: (() => void) | undefined;
  /** Wakes reading, paused while the sender is behind or the sizes undecided. */
  #wakeReader: (() => void) | undefined;

  constructor(input: StreamMergeInput) {
    this.#input = input;
  }

  /** Sequence number of the next valid row (the read phase links rows by it). */
  get count(): number {
    return this.#input.spill.count;
  }

  /**
   * Holds every later row until `until` settles (the sizes and the change
   * state are being decided): what is batched how must not depend on how
   * long that takes, or a rerun would cut other batches than the ledger holds.
   */
  pause(until: Promise<void>): void {
    const paused: Promise<void> = until.finally(() => {
      if (this.#paused === paused) this.#paused = undefined;
    });
    paused.catch(() => {});
    this.#paused = paused;
  }

  #paused: Promise<void> | undefined;

  /**
   * Takes one valid row of the file, with the identifier's value when the
   * caller has it (saves parsing the person to stamp it), and its stamp when
   * the caller made one. Await the promise it returns, if any, before the next.
   */
  append(
    row: number,
    population: string | null,
    prev: number,
    person: string,
    key?: string,
    stamp?: Uint32Array,
  ): MaybePromise {
    if (this.#failure) throw this.#failure.error;
    const paused = this.#paused;
    if (paused) return paused.then(() => this.append(row, population, prev, person, key, stamp));
    const { spill } = this.#input;
    const seq = spill.count;
    const earlier = this.#earlierVersion(prev, population, person);
    let entry: BatchEntry;
    let wrote: MaybePromise;
    let first: string | undefined;
    if (earlier === undefined) {
      entry = { rows: [row], person, seq };
      wrote = spill.append(row, population, prev, person);
    } else {
      const merged = JSON.stringify(
        mergePersons(JSON.parse(earlier.row.person) as ImportPerson, JSON.parse(person) as ImportPerson),
      );
      entry = { rows: [...earlier.row.rows, row], person: merged, seq };
      wrote = spill.append(entry.rows, population, prev, merged);
      if (this.#input.sieving) first = this.#firstVersion(earlier);
    }
    // A stamp made with the row is of the row's version: a merged person is stamped again.
    const next = {
      population,
      entry,
      prevSeq: earlier?.seq ?? -1,
      key,
      first,
      stamp: earlier === undefined ? stamp : undefined,
    };
    if (wrote) return wrote.then(() => this.#take(next));
    return this.#take(next);
  }

  /**
   * The person's latest version in the spill: the newest earlier row of
   * their (population, identifier), found along the chain from `prev`.
   */
  #earlierVersion(prev: number, population: string | null, person: string): Version | undefined {
    if (prev === -1) return undefined;
    const key = identifierKey(JSON.parse(person) as ImportPerson, this.#input.identifier);
    for (const { seq, row } of this.#versions(prev, population, key)) return { seq, row, key };
    return undefined;
  }

  /** The JSON of the person's first row alone: the oldest of their versions in the spill. */
  #firstVersion(latest: Version): string {
    let oldest = latest.row;
    if (oldest.rows.length <= 1) return oldest.person;
    for (const { row } of this.#versions(latest.row.prev, latest.row.population, latest.key)) {
      oldest = row;
      if (oldest.rows.length <= 1) break;
    }
    return oldest.person;
  }

  /**
   * The spilled versions of one person, newest first, from row `from` along
   * each row's `prev`: the rows of the same hash whose real (population,
   * identifier) is this one — rows that only share a hash (a 32-bit collision,
   * ~116 pairs among a million keys) are passed over. Read lazily: a caller
   * that stops early reads no further.
   */
  *#versions(
    from: number,
    population: string | null,
    key: string | undefined,
  ): Generator<{ seq: number; row: SpilledRow }> {
    const { spill, identifier } = this.#input;
    for (let seq = from; seq !== -1; ) {
      const row = spill.row(seq);
      if (
        row.population === population &&
        identifierKey(JSON.parse(row.person) as ImportPerson, identifier) === key
      )
        yield { seq, row };
      seq = row.prev;
    }
  }

  #take(next: Pending): MaybePromise {
    if (this.#input.sieving) {
      this.#pending.push(next);
      if (this.#opened && this.#pending.length >= this.#sieveAtOnce)
        return this.#sieveAhead().then(() => this.#backpressure());
      return undefined;
    }
    this.#batch(next);
    return this.#backpressure();
  }

  #batch(p: Pending): void {
    this.#queue.push(...this.#input.batcher.add(p.population, p.entry, p.prevSeq));
    if (this.#queue.length > 0) this.#wakeSender?.();
  }

  /** Reading waits while the sender is behind. */
  #backpressure(): MaybePromise {
    if (!this.#opened) return undefined;
    const { maxQueued } = this.#input;
    const most = typeof maxQueued === "number" ? () => maxQueued : maxQueued;
    const behind = () => this.#queue.length >= most();
    if (!behind()) return undefined;
    return (async () => {
      while (!this.#failure && behind()) {
        await new Promise<void>((resolve) => {
          this.#wakeReader = resolve;
        });
      }
      if (this.#failure) throw this.#failure.error;
    })();
  }

  /**
   * Starts batching (while paused): the people so far go through the
   * change state's sieve, and from now on batches are cut by `sizes`
   * (undefined: not decided yet, and nothing is cut until `resize`).
   */
  async open(
    sizes: (index: number) => number | undefined,
    sieve?: Sieve,
    sieveAtOnce = SIEVE_AT_ONCE,
  ): Promise<void> {
    this.#sieve = sieve;
    this.#sieveAtOnce = sieveAtOnce;
    this.#opened = true;
    this.#input.batcher.setSizes(sizes);
    if (this.#input.sieving) {
      await this.#sieveAhead();
      await this.#applySieved();
    }
    this.#cut();
  }

  /** The first batch, cut from the longest list, at most `most` people; `enqueue` sends it. */
  cutFirst(most: number): Batch | undefined {
    return this.#input.batcher.cutLongest(most);
  }

  enqueue(batch: Batch): void {
    this.#queue.push(batch);
    this.#wakeSender?.();
  }

  /** The sizes were decided (while paused): cut what is now full. */
  resize(sizes: (index: number) => number | undefined): void {
    this.#input.batcher.setSizes(sizes);
    this.#cut();
  }

  #cut(): void {
    this.#queue.push(...this.#input.batcher.cut());
    if (this.#queue.length > 0) this.#wakeSender?.();
    this.#wakeReader?.();
  }

  /** Sends the pending people through the sieve, applying the group before them (two groups at a time). */
  async #sieveAhead(): Promise<void> {
    const people = this.#pending;
    this.#pending = [];
    const sieve = this.#sieve;
    const next =
      people.length > 0
        ? { people, send: sieve ? sieve(people) : Promise.resolve(people.map((): SieveVerdict => "send")) }
        : undefined;
    // Awaited below or by the next call; until then a failure must not count as unhandled.
    next?.send.catch(() => {});
    await this.#applySieved();
    this.#sieving = next;
  }

  async #applySieved(): Promise<void> {
    const ahead = this.#sieving;
    if (!ahead) return;
    this.#sieving = undefined;
    const verdicts = await ahead.send;
    const batcher = this.#input.batcher;
    ahead.people.forEach((p, i) => {
      const verdict = verdicts[i];
      const afterHeld = this.#release(p.prevSeq);
      if (verdict === "unchanged") {
        // What the last run sent, though an earlier version was batched this run (the state holds
        // the person's merged rows, so their first rows alone look changed): the earlier version is
        // taken back out of its open batch. Once it, or a version before it, is in a batch cut,
        // the service may hold it, so this one goes after it.
        if (batcher.batched(p.prevSeq) && !batcher.withdraw(p.population, p.prevSeq)) this.#batch(p);
        else this.#input.onUnchanged(p.entry);
      } else if (
        !this.#releasing &&
        (afterHeld || (verdict === "firstRowsUnchanged" && !batcher.batched(p.prevSeq)))
      ) {
        // The first rows of a person the last run sent merged, unchanged: their later rows decide.
        this.#hold(p.entry.seq as number);
      } else this.#batch(p);
    });
  }

  #hold(seq: number): void {
    while (seq >= this.#held.length) {
      const grown = new Uint8Array(this.#held.length * 2);
      grown.set(this.#held);
      this.#held = grown;
    }
    this.#held[seq] = 1;
    this.#heldCount++;
  }

  /** Whether spill `seq` was held; it is not any more. */
  #release(seq: number): boolean {
    if (seq < 0 || seq >= this.#held.length || this.#held[seq] !== 1) return false;
    this.#held[seq] = 0;
    this.#heldCount--;
    return true;
  }

  /**
   * The file is read: the held people's latest versions are what the file
   * says of them now, and none turned out what the last run sent. Read back
   * from the spill, they go through the sieve again (to be stamped) and are batched.
   */
  async #sendHeld(): Promise<void> {
    if (this.#heldCount === 0) return;
    this.#releasing = true;
    const { spill, identifier } = this.#input;
    const held = this.#held;
    for (let seq = 0; seq < held.length && this.#heldCount > 0; seq++) {
      if (held[seq] !== 1) continue;
      held[seq] = 0;
      this.#heldCount--;
      const row = spill.row(seq);
      const key = identifierKey(JSON.parse(row.person) as ImportPerson, identifier);
      const first = row.rows.length > 1 ? this.#firstVersion({ seq, row, key }) : undefined;
      // prevSeq -1: no earlier version of a held person was batched (it was held, or it is the first).
      this.#pending.push({
        population: row.population,
        entry: { rows: row.rows, person: row.person, seq },
        prevSeq: -1,
        key,
        first,
      });
      if (this.#pending.length >= this.#sieveAtOnce) {
        await this.#sieveAhead();
        // As while reading: many held people must not all wait in batches at once.
        await this.#backpressure();
      }
    }
    await this.#sieveAhead();
    await this.#applySieved();
  }

  /** The file is read: the rest goes through the sieve and into batches. Needs `open` first. */
  async end(): Promise<void> {
    if (this.#input.sieving) {
      await this.#sieveAhead();
      await this.#applySieved();
    }
    if (this.#failure) throw this.#failure.error;
    // Held people whose later rows never turned out what was sent: their latest version goes now.
    if (this.#input.sieving) await this.#sendHeld();
    this.#queue.push(...this.#input.batcher.finish());
    this.#ended = true;
    this.#wakeSender?.();
  }

  /** Ends the stream of batches with `error` (the read failed) and wakes a paused reader with it. */
  stop(error: unknown): void {
    this.#failure ??= { error };
    this.#wakeSender?.();
    this.#wakeReader?.();
  }

  /** The batches in index order, as they are cut; throws what `stop` was given once the queue is empty. */
  async *batches(): AsyncGenerator<Batch> {
    for (;;) {
      const batch = this.#queue.shift();
      if (batch) {
        this.#wakeReader?.();
        yield batch;
        continue;
      }
      if (this.#failure) throw this.#failure.error;
      if (this.#ended) return;
      await new Promise<void>((resolve) => {
        this.#wakeSender = resolve;
      });
      this.#wakeSender = undefined;
    }
  }
}

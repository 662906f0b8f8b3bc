import type { Batch, BatchEntry, Batcher } from "./batch.ts";
import type { ValidRow } from "./mapped-rows.ts";
import type { MaybePromise } from "./maybe-promise.ts";
import type { PersonStore } from "./person-store.ts";
import type { PendingPerson } from "./sent-stamps.ts";
import type { SieveVerdict } from "./sent-state.ts";

export interface StreamMergeInput {
  /** Where each person's versions go: a later row of theirs is merged into the latest. */
  store: PersonStore;
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

/** What the merge takes of a valid row. */
export type ValidPerson = Pick<ValidRow, "row" | "population" | "key" | "person" | "stamp">;

/**
 * Phase 2, merge duplicates while the file is read: the read phase hands
 * every valid person to `put`, which keeps them in the person store
 * (person-store.ts). A person's first row becomes an entry at once; a later
 * row is merged there into the person's latest version (later values win,
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
 * the first rows, send-gate.ts); from then on full batches queue for the
 * sender (`batches()`), and reading pauses while `maxQueued` wait. The same
 * file, definition and sizes always give the same batches, which is what
 * lets the ledger resume by index — unless a sieve leaves out people
 * unchanged since the last run (and withdraws their earlier versions), when
 * the numbering also depends on the change state: open-import.ts keeps such
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
   * Per store seq, 1 when that version of a person is held back:
   * their first rows are what the last run sent of them, their later rows
   * still to come. A byte a version and nothing else, so memory stays flat
   * however many are held: the end reads them back from the store.
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
   * Takes one valid row of the file: stores it (merged into the person's
   * latest version when met before) and takes the version on towards a
   * batch. Await the promise it returns, if any, before the next.
   */
  put(row: ValidPerson): MaybePromise {
    if (this.#failure) throw this.#failure.error;
    const paused = this.#paused;
    if (paused) return paused.then(() => this.put(row));
    const { store } = this.#input;
    const { version, earlier, written } = store.put(row.row, row.population, row.key, row.person);
    const next: Pending = {
      population: row.population,
      entry: { rows: version.rows, person: version.person, seq: version.seq },
      prevSeq: earlier,
      key: row.key,
      first: earlier !== -1 && this.#input.sieving ? store.firstVersion(earlier) : undefined,
      // A stamp made with the row is of the row's version: a merged person is stamped again.
      stamp: earlier === -1 ? row.stamp : undefined,
    };
    if (written) return written.then(() => this.#take(next));
    return this.#take(next);
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

  /** Whether store `seq` was held; it is not any more. */
  #release(seq: number): boolean {
    if (seq < 0 || seq >= this.#held.length || this.#held[seq] !== 1) return false;
    this.#held[seq] = 0;
    this.#heldCount--;
    return true;
  }

  /**
   * The file is read: the held people's latest versions are what the file
   * says of them now, and none turned out what the last run sent. Read back
   * from the store, they go through the sieve again (to be stamped) and are batched.
   */
  async #sendHeld(): Promise<void> {
    if (this.#heldCount === 0) return;
    this.#releasing = true;
    const { store } = this.#input;
    const held = this.#held;
    for (let seq = 0; seq < held.length && this.#heldCount > 0; seq++) {
      if (held[seq] !== 1) continue;
      held[seq] = 0;
      this.#heldCount--;
      const v = store.version(seq);
      // prevSeq -1: no earlier version of a held person was batched (it was held, or it is the first).
      this.#pending.push({
        population: v.population,
        entry: { rows: v.rows, person: v.person, seq },
        prevSeq: -1,
        key: v.key,
        first: v.rows.length > 1 ? store.firstVersion(seq) : undefined,
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

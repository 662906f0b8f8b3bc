import type { ImportJobDefinition } from "../config/import-job.ts";
import { type Batching, firstBatching, inFlightLimit, restSize, type SizingInput } from "./batch-sizing.ts";
import type { ImportCounts } from "./import-counts.ts";
import { ImportFileError } from "./import-error.ts";
import type { RunImportOptions } from "./import-options.ts";
import type { ImportLedger, LedgerBatch } from "./ledger.ts";
import type { StreamMerge } from "./merge-phase.ts";
import type { ReadCounts } from "./read-phase.ts";
import { refusesFile } from "./refusal-rule.ts";
import type { PendingPerson } from "./sent-stamps.ts";
import { openSentState, type SentState, sentStateScope } from "./sent-state.ts";

type GateOptions = Pick<
  RunImportOptions,
  | "changes"
  | "changesUnavailable"
  | "quota"
  | "concurrency"
  | "concurrencyUnderQuota"
  | "maxBatchSize"
  | "rejectsFile"
  | "dryRun"
  | "file"
  | "logger"
>;

/**
 * The gate between reading and sending: nothing is sent before the first
 * rows (GATE_ROWS, or the whole of a shorter file) are read and judged. Then,
 * once: a file whose first rows are mostly rejected fails the run before any
 * request (mostlyRejected); the change state is opened (sent-state.ts); the
 * ledger says which batches an earlier attempt finished; and the batch sizes
 * and the requests in flight are decided (batch-sizing.ts), with the first
 * request sent alone while the quota is not known yet. Reading waits
 * meanwhile (StreamMerge.pause).
 */
export class SendGate {
  /** The change state, once opened (change-only runs). */
  sent: SentState | undefined;
  /** The batches an earlier attempt of this run finished, by index. */
  finished = new Map<number, LedgerBatch>();
  /** Requests in flight at once: raised once the gate sees a binding quota (inFlightLimit). */
  inFlight: number;
  /** Settled by the first answer: a batch size decided by the quota waits for it. */
  readonly firstAnswer = settleable();
  readonly #options: GateOptions;
  readonly #def: ImportJobDefinition;
  readonly #job: string;
  readonly #ledger: ImportLedger | undefined;
  readonly #merge: StreamMerge;
  readonly #counts: ImportCounts;
  readonly #concurrency: number;
  readonly #dryRun: boolean;
  #gate: Promise<void> | undefined;

  constructor(
    options: GateOptions,
    run: {
      def: ImportJobDefinition;
      job: string;
      ledger: ImportLedger | undefined;
      merge: StreamMerge;
      counts: ImportCounts;
    },
  ) {
    this.#options = options;
    this.#def = run.def;
    this.#job = run.job;
    this.#ledger = run.ledger;
    this.#merge = run.merge;
    this.#counts = run.counts;
    this.#dryRun = options.dryRun === true;
    this.#concurrency = this.#dryRun ? 1 : Math.max(1, options.concurrency ?? 1);
    this.inFlight = this.#concurrency;
  }

  /** Opens the gate after the rows `counts` counts, `bytesRead` of `size` bytes into the file. Throws a file refused. */
  open(counts: ReadCounts, bytesRead: number, size: number): void {
    this.#counts.times.sending = Date.now();
    const refusal = mostlyRejected(counts, this.#options.rejectsFile, this.#dryRun);
    if (refusal !== undefined && !this.#dryRun) throw new ImportFileError("import_mostly_rejected", refusal);
    // A dry run sends nothing, so nothing stops it: it says what the real run would do instead.
    if (refusal !== undefined)
      this.#counts.wouldBeRefused = `a real run would be refused (import_mostly_rejected): ${refusal}`;
    const valid = counts.rowsRead - counts.rejected;
    const people = bytesRead > 0 ? Math.ceil((valid * size) / bytesRead) : valid;
    const gate = this.#decide(people);
    this.#gate = gate;
    this.#merge.pause(gate);
    gate.catch((err: unknown) => this.#merge.stop(err));
  }

  /** After the whole file is read: opens the gate if the file was shorter than GATE_ROWS, and waits for it. */
  async passed(counts: ReadCounts, size: number): Promise<void> {
    if (this.#gate === undefined) this.open(counts, size, size);
    await this.#gate;
  }

  async #decide(people: number): Promise<void> {
    const sent = await this.#openChangeState(people);
    // Batches made after leaving the unchanged out are numbered by what the state held at the
    // start: a run that compares skips none (an interrupted attempt's people are in the state
    // now, not at those numbers), and the ledger records that it compared, so that a retry that
    // cannot compare (the state expired or was lost) does not skip them by index either.
    const ledger = this.#ledger;
    if (ledger)
      this.finished = await ledger.start(
        this.#options.file,
        sent?.changeState === "compared" ? "compared" : "all",
      );
    const recorded = ledger ? (await ledger.run())?.batching : undefined;
    const quota = this.#options.quota && !this.#dryRun ? this.#options.quota : undefined;
    const sizing = this.#sizing(people);
    const b: Batching = recorded ?? firstBatching(sizing, quota ? { limit: await quota() } : false);
    const sieve = sent ? (p: readonly PendingPerson[]) => sent.sieve(p) : undefined;
    const merge = this.#merge;
    if (!b.probe) {
      if (!recorded) await ledger?.setBatching(b);
      await this.#raiseUnderQuota(people);
      await merge.open(sizesFrom(b), sieve, sent?.sieveAtOnce);
      return;
    }
    // The quota is not known yet: the first request, as full as the people so far make it,
    // goes alone and its answer sizes the rest. Reading waits meanwhile (merge.pause).
    await merge.open(() => undefined, sieve, sent?.sieveAtOnce);
    const first = merge.cutFirst(b.first);
    if (first === undefined) {
      b.rest = b.first;
      await ledger?.setBatching(b);
      merge.resize(sizesFrom(b));
      return;
    }
    if (!recorded) {
      b.first = first.entries.length;
      await ledger?.setBatching(b);
    }
    merge.enqueue(first);
    await this.firstAnswer.promise;
    if (b.rest === undefined) {
      b.rest = restSize(sizing, await quota?.());
      await ledger?.setBatching(b);
    }
    await this.#raiseUnderQuota(people);
    this.#options.logger?.info(
      { job: this.#job, first: b.first, rest: b.rest, inFlight: this.inFlight },
      "batch sizes decided",
    );
    merge.resize(sizesFrom(b));
  }

  async #openChangeState(people: number): Promise<SentState | undefined> {
    const changes = this.#options.changes;
    if (changes) {
      this.sent = await openSentState({
        redis: changes.redis,
        prefix: changes.prefix,
        scope: sentStateScope(changes.service, this.#def),
        identifier: this.#def.target.identifier,
        mode: changes.full === true ? "full" : "compare",
        people,
        readOnly: this.#dryRun,
        ...(changes.ttlSeconds ? { ttlSeconds: changes.ttlSeconds } : {}),
      });
      this.#counts.changeState = this.sent.changeState;
    } else if (this.#options.changesUnavailable) {
      this.#counts.changeState = "unavailable";
      this.#counts.notes.push(this.#options.changesUnavailable);
    }
    return this.sent;
  }

  #sizing(people: number): SizingInput {
    return { definitionSize: this.#def.batchSize, maxBatchSize: this.#options.maxBatchSize, people };
  }

  async #raiseUnderQuota(people: number): Promise<void> {
    if (!this.#options.quota || this.#dryRun) return;
    const under = {
      ...this.#sizing(people),
      concurrency: this.#concurrency,
      underQuota: this.#options.concurrencyUnderQuota,
    };
    this.inFlight = inFlightLimit(under, await this.#options.quota());
  }
}

/**
 * A file whose first rows (GATE_ROWS, or all of a shorter file of at least
 * JUDGED_FROM_ROWS) are mostly rejected is the wrong file or the wrong
 * mapping: it sends nothing, and the run fails with the rows read so far in
 * the rejects file. Returns why, or undefined for a file that may go on; a
 * dry run is judged by the same rule and says so instead of failing.
 */
function mostlyRejected(counts: ReadCounts, rejectsFile: string, dryRun: boolean): string | undefined {
  const missingIdentifier = counts.rejectedByCode.missing_identifier ?? 0;
  if (!refusesFile({ rowsRead: counts.rowsRead, rejected: counts.rejected, missingIdentifier }))
    return undefined;
  const top = Object.entries(counts.rejectedByReason)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([reason, n]) => `${n}× ${reason}`)
    .join("; ");
  const sent = dryRun ? "nothing would be sent" : "nothing was sent";
  return `${counts.rejected} of the first ${counts.rowsRead} rows were rejected (${top.slice(0, 500)}): ${sent}. Is it the right file and mapping? The rejected rows are in ${rejectsFile}`;
}

/** Batch sizes by index from a plan; undefined while the later ones wait for the first answer. */
function sizesFrom(b: Batching): (index: number) => number | undefined {
  return (index) => (index === 0 ? b.first : b.rest);
}

/** A promise and its settling functions (Promise.withResolvers, which Node 20 lacks). */
function settleable(): { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } {
  let resolve = () => {};
  let reject: (err: unknown) => void = () => {};
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}

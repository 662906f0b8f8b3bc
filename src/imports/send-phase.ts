import type { Batch, BatchEntry } from "./batch.ts";
import type { CountMismatch } from "./count-mismatch.ts";
import type { LedgerBatch } from "./ledger.ts";
import type { RowProblem } from "./row-problem.ts";

/** What became of one batch: sent now, written to the requests file, or finished by an earlier run. */
export interface BatchResult {
  index: number;
  /** People in the batch (a person's merged rows count once). */
  people: number;
  /** true when a previous run had finished this batch and it was not sent. */
  resumed: boolean;
  importIds: string[];
  imported: number;
  /** Rows merged into another row of the same person. */
  duplicates: number;
  /** Rows the service refused after validation, with its problems. */
  rejected: { rows: number[]; problems: RowProblem[] }[];
  /** HTTP requests it took (more than one when a refusal was bisected). */
  requests: number;
  /** The service counted a different number of people than were sent. */
  countMismatch: boolean;
  /** Each request of the batch whose answer counted otherwise (none when absent). */
  countMismatches?: readonly CountMismatch[];
  /** The batch's people; those the service refused are in `refusedEntries`, with its problems. */
  entries: readonly BatchEntry[];
  refusedEntries: readonly { entry: BatchEntry; problems: RowProblem[] }[];
}

export interface SendPhaseInput {
  batches: AsyncIterable<Batch>;
  /** The batch of this index an earlier run of the same file and definition finished, if any: not sent again. */
  finished: (index: number) => LedgerBatch | undefined;
  /**
   * Sends one batch and records it in the ledger before resolving: a batch
   * counts as done only once its answer is recorded. `sendNoMore` is aborted
   * at the run's first failure (a ledger write Redis refused, say): from then
   * on the batch sends no request, though one already sent is answered.
   */
  send: (batch: Batch, sendNoMore: AbortSignal) => Promise<BatchResult>;
  /**
   * Requests in flight at once; each still waits for the rate governor. A
   * function is asked before each batch starts: the run raises it once a
   * quota binds (batch-sizing.ts, inFlightLimit).
   */
  concurrency: number | (() => number);
  /** Called once per batch, in the order answers come (resumed batches at once). */
  onResult: (result: BatchResult) => void | Promise<void>;
  /**
   * A stop: no batch starts and no request goes out any more, as after a
   * failure, but the requests already sent are answered and recorded (unless
   * `send` aborts them itself), so a resume sends none the service answered.
   */
  signal?: AbortSignal;
  /** Told once when a stop comes, with the batches then in flight, whose answers it waits for. */
  onStop?: (inFlight: number) => void;
}

/** A batch an earlier run finished, as a result: the ledger's counts, nothing sent. */
function resumedResult(batch: Batch, done: LedgerBatch): BatchResult {
  const refused = new Map<number, RowProblem[]>();
  for (const r of done.rejected) for (const row of r.rows) refused.set(row, r.problems);
  const refusedEntries: { entry: BatchEntry; problems: RowProblem[] }[] = [];
  for (const entry of batch.entries) {
    const problems = refused.get(entry.rows[entry.rows.length - 1] as number);
    if (problems !== undefined) refusedEntries.push({ entry, problems });
  }
  return {
    entries: batch.entries,
    refusedEntries,
    index: batch.index,
    people: batch.entries.length,
    resumed: true,
    importIds: done.importIds,
    imported: done.imported,
    duplicates: done.duplicates,
    rejected: done.rejected,
    requests: 0,
    countMismatch: false,
  };
}

/**
 * Phase 3, send: up to `concurrency` batches in flight, so reading the file,
 * building the next batch, the network and the service overlap instead of
 * taking turns. A batch waits for the batches it names in `after` (they carry
 * an earlier version of one of its people) to be answered. Each batch is
 * recorded by `send` when its answer comes, whatever the order, so a crash
 * loses at most the batches in flight, which the next run sends again
 * (imports match by identifier, so a resend converges). When one batch fails
 * no new one starts, and the others in flight send nothing more: one still
 * waiting for the rate budget, a retry or the next half of a bisection gives
 * up. Those already sent are waited for — an answered batch is recorded if
 * Redis takes it — and the first failure is thrown. So a failed ledger write
 * leaves unrecorded at most the requests that were on the wire, never more
 * than the batches in flight. A failure of `batches` (the read failed) is
 * thrown the same way. A stop (`signal`) ends the phase the same way, with
 * the signal's reason: what was answered before the phase ends is recorded.
 */
export async function sendBatches(input: SendPhaseInput): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  // Every batch started, by index, settled once its answer is counted (or it failed).
  const settled = new Map<number, Promise<void>>();
  let failure: { error: unknown } | undefined;
  const sendNoMore = new AbortController();
  const fail = (error: unknown) => {
    failure ??= { error };
    sendNoMore.abort(failure.error);
  };
  const onStop = () => {
    input.onStop?.(inFlight.size);
    fail(input.signal?.reason);
  };
  if (input.signal?.aborted) onStop();
  else input.signal?.addEventListener("abort", onStop, { once: true });
  const { concurrency } = input;
  const limit = typeof concurrency === "number" ? () => concurrency : concurrency;
  const start = (batch: Batch) => {
    const flight: Promise<void> = input
      .send(batch, sendNoMore.signal)
      .then((result) => input.onResult(result))
      .catch(fail)
      .finally(() => inFlight.delete(flight));
    inFlight.add(flight);
    settled.set(batch.index, flight);
  };
  try {
    for await (const batch of input.batches) {
      if (failure) break;
      input.signal?.throwIfAborted();
      const done = input.finished(batch.index);
      if (done) {
        await input.onResult(resumedResult(batch, done));
        continue;
      }
      for (const earlier of batch.after) await settled.get(earlier);
      while (inFlight.size >= limit()) await Promise.race(inFlight);
      if (failure) break;
      start(batch);
    }
  } catch (error) {
    fail(error);
  } finally {
    await Promise.all(inFlight);
    input.signal?.removeEventListener("abort", onStop);
  }
  if (failure) throw failure.error;
}

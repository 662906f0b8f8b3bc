import type { Batch } from "./batch.ts";
import type { LedgerBatch } from "./ledger.ts";

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
  /** Rows the service refused after validation, with its reason. */
  rejected: { rows: number[]; reason: string }[];
  /** HTTP requests it took (more than one when a refusal was bisected). */
  requests: number;
  /** The service counted a different number of people than were sent. */
  countMismatch: boolean;
}

export interface SendPhaseInput {
  batches: AsyncIterable<Batch>;
  /** Batches an earlier run of the same file and definition finished, by index: not sent again. */
  finished: ReadonlyMap<number, LedgerBatch>;
  /**
   * Sends one batch and records it in the ledger before resolving: a batch
   * counts as done only once its answer is recorded.
   */
  send: (batch: Batch) => Promise<BatchResult>;
  /** Requests in flight at once; each still waits for the rate governor. */
  concurrency: number;
  /** Called once per batch, in the order answers come (resumed batches at once). */
  onResult: (result: BatchResult) => void | Promise<void>;
  signal?: AbortSignal;
}

/** A batch an earlier run finished, as a result: the ledger's counts, nothing sent. */
export function resumedResult(batch: Batch, done: LedgerBatch): BatchResult {
  return {
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
 * Phase 3, send: up to `concurrency` batches in flight, so building the next
 * batch, the network and the service overlap instead of taking turns. Each
 * batch is recorded by `send` when its answer comes, whatever the order, so a
 * crash loses at most the batches in flight, which the next run sends again
 * (imports match by identifier, so a resend converges). When one batch fails
 * no new one starts; the others in flight are waited for — an answered batch
 * is recorded — and the first failure is thrown.
 */
export async function sendBatches(input: SendPhaseInput): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  const start = (batch: Batch) => {
    const flight: Promise<void> = input
      .send(batch)
      .then((result) => input.onResult(result))
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => inFlight.delete(flight));
    inFlight.add(flight);
  };
  try {
    for await (const batch of input.batches) {
      if (failure) break;
      input.signal?.throwIfAborted();
      const done = input.finished.get(batch.index);
      if (done) {
        await input.onResult(resumedResult(batch, done));
        continue;
      }
      while (inFlight.size >= input.concurrency) await Promise.race(inFlight);
      if (failure) break;
      start(batch);
    }
  } finally {
    await Promise.all(inFlight);
  }
  if (failure) throw failure.error;
}

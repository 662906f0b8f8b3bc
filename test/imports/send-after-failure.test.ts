import { describe, expect, it } from "vitest";
import type { Batch } from "../../src/imports/batch.ts";
import { type BatchResult, sendBatches } from "../../src/imports/send-phase.ts";

async function* batches(count: number): AsyncGenerator<Batch> {
  for (let index = 0; index < count; index++) yield { index, population: null, entries: [], after: [] };
}

function answered(batch: Batch): BatchResult {
  return {
    index: batch.index,
    people: 0,
    resumed: false,
    importIds: [],
    imported: 0,
    duplicates: 0,
    rejected: [],
    requests: 1,
    countMismatch: false,
    entries: [],
    refusedEntries: [],
  };
}

/** A wait for the rate budget that ends early, with the signal's reason, when the signal is aborted. */
function budgetWait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

describe("the send phase after a failed batch", () => {
  it("sends nothing more: a batch still waiting for the rate budget gives up", async () => {
    const sent: number[] = [];
    const ledgerRefused = new Error("OOM command not allowed when used memory > 'maxmemory'.");
    const run = sendBatches({
      batches: batches(10),
      finished: () => undefined,
      concurrency: 2,
      onResult: () => {},
      async send(batch, sendNoMore) {
        // Batch 0 is answered at once and its ledger write fails; batch 1 is still waiting for the budget then.
        await budgetWait(batch.index === 0 ? 5 : 200, sendNoMore);
        sent.push(batch.index);
        if (batch.index === 0) throw ledgerRefused;
        return answered(batch);
      },
    });
    await expect(run).rejects.toBe(ledgerRefused);
    expect(sent).toEqual([0]);
  });

  it("waits for a batch already sent, and counts its answer", async () => {
    const counted: number[] = [];
    const failed = new Error("the ledger write failed");
    const run = sendBatches({
      batches: batches(10),
      finished: () => undefined,
      concurrency: 2,
      onResult: (r) => {
        counted.push(r.index);
      },
      async send(batch) {
        // Both on the wire: the failure of batch 0 does not cut batch 1's answer off.
        await new Promise((r) => setTimeout(r, batch.index === 0 ? 5 : 50));
        if (batch.index === 0) throw failed;
        return answered(batch);
      },
    });
    await expect(run).rejects.toBe(failed);
    expect(counted).toEqual([1]);
  });
});

import type { ApiClient } from "../api/index.ts";
import type { ImportRun } from "./import-run.ts";
import { sendBatches } from "./send-phase.ts";
import { batchSender } from "./send-to-service.ts";
import { unverifiedMarker } from "./unverified-marker.ts";

/** Send (send-phase.ts): the batches as the merge cuts them, each recorded in the ledger when answered. */
export async function sendPhase(r: ImportRun): Promise<void> {
  const { options, counts, gate } = r;
  const def = options.definition;
  const to = options.dryRun
    ? ({ dryRun: true, requests: r.files.requests } as const)
    : ({
        dryRun: false,
        client: options.client as ApiClient,
        records: {
          ledger: r.ledger,
          sent: () => gate.sent,
          unverified: unverifiedMarker(options, def, r.job),
        },
        // Not the stop: a request on the wire is answered, and recorded, unless the stop's deadline passes.
        abandon: options.abandon,
      } as const);
  await sendBatches({
    batches: r.merge.batches(),
    finished: (index) => gate.finished.get(index),
    concurrency: () => gate.inFlight,
    send: batchSender(def, to),
    onResult: async (result) => {
      gate.firstAnswer.resolve();
      if (result.resumed && gate.sent) {
        const refused = new Set(result.refusedEntries.map((x) => x.entry));
        gate.sent.recordResumed(result.entries.filter((e) => !refused.has(e)));
      }
      const counted = counts.send.add(result);
      options.personLog?.batch(result);
      r.progress.tell();
      await options.onBatch?.({
        index: result.index,
        people: result.people,
        resumed: result.resumed,
        imported: counted.imported,
        rejected: counted.rejected,
      });
    },
    ...(options.signal ? { signal: options.signal } : {}),
    onStop: (waiting) => {
      if (waiting > 0)
        options.logger?.info({ job: r.job, waiting }, "stopping: waiting for the answers of requests sent");
    },
  });
}

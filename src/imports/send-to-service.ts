import { type ApiClient, fillPath } from "../api/index.ts";
import type { ImportJobDefinition } from "../config/import-job.ts";
import { type Batch, type BatchEntry, importBody } from "./batch.ts";
import type { CountMismatch } from "./count-mismatch.ts";
import type { ImportLedger } from "./ledger.ts";
import type { RequestsWriter } from "./requests-writer.ts";
import { identifierSelector } from "./rules/index.ts";
import type { BatchResult } from "./send-phase.ts";
import type { SentState } from "./sent-state.ts";
import { submitBatch } from "./submit-batch.ts";

const IMPORT_PATH = "/studies/{studyId}/participants/import";

/** Sends one batch and records its answer before resolving (send-phase.ts's `send`). */
export type SendBatch = (batch: Batch, sendNoMore: AbortSignal) => Promise<BatchResult>;

/** The way a run's batches go: to the service, or, for a dry run, to the requests file. */
export function batchSender(
  def: ImportJobDefinition,
  to:
    | { dryRun: true; requests: RequestsWriter }
    | {
        dryRun: false;
        client: ApiClient;
        records: Parameters<typeof sendToService>[3];
        abandon: AbortSignal | undefined;
      },
): SendBatch {
  const selector = identifierSelector(def.target.identifier);
  if (to.dryRun)
    return writeToRequestsFile(to.requests, fillPath(IMPORT_PATH, { studyId: def.target.studyId }), selector);
  return sendToService(to.client, def.target.studyId, selector, to.records, to.abandon);
}

function mergedRows(batch: Batch): number {
  let duplicates = 0;
  for (const e of batch.entries) duplicates += e.rows.length - 1;
  return duplicates;
}

/**
 * Sends a batch to the service and, once answered, records the people it
 * accepted in the change state (those it refused are sent again next time)
 * and the batch in the ledger. `abandon` aborts a request on the wire; a stop
 * of the run only keeps the next ones from going (`sendNoMore`).
 */
function sendToService(
  client: ApiClient,
  studyId: string,
  identifier: string,
  records: {
    ledger: ImportLedger | undefined;
    sent: () => SentState | undefined;
    /** Marks the people of a request whose answer counted otherwise (unverified-people.ts). */
    unverified?:
      | ((batch: Batch, m: CountMismatch, entries: readonly BatchEntry[]) => Promise<void>)
      | undefined;
  },
  abandon: AbortSignal | undefined,
): (batch: Batch, sendNoMore: AbortSignal) => Promise<BatchResult> {
  const { ledger } = records;
  return async (batch, sendNoMore) => {
    const sent = records.sent();
    const outcome = await submitBatch(
      client,
      { studyId, identifier, population: batch.population },
      batch.entries,
      abandon,
      sendNoMore,
    );
    let duplicates = 0;
    for (const e of outcome.imported) duplicates += e.rows.length - 1;
    const rejected = outcome.rejected.map((r) => ({ rows: r.entry.rows, problems: r.problems }));
    const countMismatches = outcome.mismatches.map((m) => ({
      batch: batch.index,
      importId: m.importId,
      sent: m.sent,
      counted: m.counted,
    }));
    for (const [i, m] of outcome.mismatches.entries())
      await records.unverified?.(batch, countMismatches[i] as CountMismatch, m.entries);
    await sent?.record(outcome.imported);
    await ledger?.putBatch(batch.index, {
      status: "done",
      importIds: outcome.importIds,
      imported: outcome.imported.length,
      rejected,
      duplicates,
      at: new Date().toISOString(),
    });
    return {
      entries: batch.entries,
      refusedEntries: outcome.rejected,
      index: batch.index,
      people: batch.entries.length,
      resumed: false,
      importIds: outcome.importIds,
      imported: outcome.imported.length,
      duplicates,
      rejected,
      requests: outcome.requests,
      countMismatch: outcome.countMismatches > 0,
      countMismatches,
    };
  };
}

/** A dry run's "send": the request it would make, written to the requests file. */
function writeToRequestsFile(
  requests: RequestsWriter,
  requestPath: string,
  identifier: string,
): (batch: Batch) => Promise<BatchResult> {
  return async (batch) => {
    await requests.write(
      "importParticipants",
      "POST",
      requestPath,
      importBody(batch.entries, identifier, batch.population),
    );
    return {
      entries: batch.entries,
      refusedEntries: [],
      index: batch.index,
      people: batch.entries.length,
      resumed: false,
      importIds: [],
      imported: batch.entries.length,
      duplicates: mergedRows(batch),
      rejected: [],
      requests: 1,
      countMismatch: false,
    };
  };
}

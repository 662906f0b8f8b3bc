import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import type { ImportJobDefinition } from "../config/import-job.ts";
import type { Batch, BatchEntry } from "./batch.ts";
import type { CountMismatch } from "./count-mismatch.ts";
import { markUnverified } from "./unverified-people.ts";

export interface UnverifiedMarkerOptions {
  ledger?: { redis: Redis; prefix: string } | undefined;
  changes?: { redis: Redis | Cluster; prefix: string } | undefined;
  logger?: Logger | undefined;
}

/**
 * What a run does with a request whose answer counted otherwise: one log
 * warning naming the batch and its import id (counts only, no person), and
 * its people marked unverified in Redis when the run has Redis (the ledger's
 * or the change state's). A run without Redis still warns, and the report
 * lists the mismatch.
 */
export function unverifiedMarker(
  options: UnverifiedMarkerOptions,
  def: ImportJobDefinition,
  job: string,
): (batch: Batch, m: CountMismatch, entries: readonly BatchEntry[]) => Promise<void> {
  const store = options.ledger ?? options.changes;
  return async (batch, m, entries) => {
    options.logger?.warn(
      { job, batch: m.batch, importId: m.importId, sent: m.sent, counted: m.counted },
      "the service counted other than the people sent; they are marked unverified",
    );
    if (!store) return;
    await markUnverified(store.redis, store.prefix, {
      studyId: def.target.studyId,
      identifier: def.target.identifier,
      population: batch.population,
      mismatch: m,
      entries,
    });
  };
}

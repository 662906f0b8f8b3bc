import { DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE } from "../config/import-job.ts";

/**
 * How many people a request carries: a runtime decision, so that the
 * definition (and with it its hash, its ledger and its job ids) never
 * changes for it.
 *
 * - `own`: the definition's `batchSize` (default 500), capped by
 *   `imports.maxBatchSize`.
 * - `most`: the contract's maximum (1,000 people a request), or
 *   `imports.maxBatchSize` for a service whose limit is lower. Used when a
 *   quota binds: each request spends one unit of the budget whatever it
 *   carries, so the fullest requests finish soonest. A 413 still halves a
 *   request until it fits (submit-batch.ts).
 * - `free`, when no quota binds: `most` for a file of COLD_FIRST_AT people or
 *   more whose definition leaves batchSize at its default (the run's
 *   choice: end to end, 300,000 rows went ~18% faster in requests of 1,000
 *   than of 500, docs/engineering/performance-log.md), `own` otherwise — a batchSize the
 *   definition sets is the user's.
 *
 * A quota **binds** when the rate governor has seen one (X-RateLimit-Limit)
 * and the people the file holds, in requests of `free`, are more requests
 * than one window of it allows: the run would have to wait for a reset.
 */
export interface SizingInput {
  /** The definition's batchSize. */
  definitionSize: number;
  /** Config `imports.maxBatchSize`, when set. */
  maxBatchSize?: number | undefined;
  /** People the file holds, estimated from the rows read so far and the file's size. */
  people: number;
}

export interface Batching {
  first: number;
  /** Undecided until the first answer has shown the quota. */
  rest?: number;
  /**
   * The first batch was cut from the longest population's list at the
   * gate, `first` people, and sent alone; `rest` followed its answer.
   */
  probe?: boolean;
}

/** Files estimated to hold this many people or more send their first request at `most` when the quota is not known yet. */
const COLD_FIRST_AT = 10_000;

function sizesOf(input: SizingInput): { own: number; most: number; free: number } {
  const most = Math.min(MAX_BATCH_SIZE, input.maxBatchSize ?? MAX_BATCH_SIZE);
  const own = Math.min(input.definitionSize, most);
  const runChooses = input.definitionSize === DEFAULT_BATCH_SIZE && input.people >= COLD_FIRST_AT;
  return { most, own, free: runChooses ? most : own };
}

function quotaBinds(limit: number, people: number, size: number): boolean {
  return Math.ceil(people / size) > limit;
}

/**
 * The sizes before the first request. `limit`: the quota the governor has
 * seen, `undefined` when it has seen none yet; `quota` false when there is no
 * governor at all (a library caller, a dry run). While the quota is unknown
 * the first request goes alone anyway (the governor lets one request teach
 * the quota): for a large file it is a full one (`probe`, `rest` decided by
 * its answer), since under a binding quota a request of fewer people costs a
 * whole request of the budget; a smaller file keeps the job's batchSize.
 */
export function firstBatching(input: SizingInput, quota: false | { limit: number | undefined }): Batching {
  const { free, most } = sizesOf(input);
  if (quota === false) return { first: free, rest: free };
  if (quota.limit === undefined) {
    return input.people >= COLD_FIRST_AT ? { first: most, probe: true } : { first: free, rest: free };
  }
  const size = quotaBinds(quota.limit, input.people, free) ? most : free;
  return { first: size, rest: size };
}

/** The size of the batches after the first, once an answer came: `limit` undefined means the service showed none. */
export function restSize(input: SizingInput, limit: number | undefined): number {
  const { free, most } = sizesOf(input);
  return limit !== undefined && quotaBinds(limit, input.people, free) ? most : free;
}

/**
 * Requests one run keeps in flight. Without a binding quota, `concurrency`
 * (config `imports.concurrency`): enough to overlap the client's work with
 * the service's. Under a binding quota requests are the scarce thing and the
 * governor already keeps them within it, so the run may have `underQuota`
 * in flight (config `imports.concurrencyUnderQuota`), if that is more: when a
 * window opens its requests go out as fast as the service answers them, and
 * the last window, which nothing overlaps, ends sooner. More in flight also
 * means more batches sent again after a crash (at most those in flight).
 */
export function inFlightLimit(
  input: SizingInput & { concurrency: number; underQuota?: number | undefined },
  limit: number | undefined,
): number {
  const { free } = sizesOf(input);
  const binds = limit !== undefined && quotaBinds(limit, input.people, free);
  return binds ? Math.max(input.concurrency, input.underQuota ?? input.concurrency) : input.concurrency;
}

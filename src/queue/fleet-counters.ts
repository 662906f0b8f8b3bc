import type { Redis } from "ioredis";

/**
 * Counters of what the whole fleet did, kept in Redis beside the queues: the
 * service's answers by operation and status, and the time spent waiting on
 * the shared rate budget. Workers add to them as they go; the ops server
 * reads them for /metrics, so it needs no worker in its own process and
 * shows the sum over every worker on the Redis.
 */
export function fleetCounterKeys(prefix: string): { responses: string; budget: string } {
  return { responses: `${prefix}:metrics:responses`, budget: `${prefix}:metrics:budget` };
}

/**
 * One answer of the service. Not awaited by callers: a counter must never
 * slow a request, and one lost while Redis restarts does not matter.
 */
export function countResponse(redis: Redis, prefix: string, operationId: string, status: number): void {
  redis.hincrby(fleetCounterKeys(prefix).responses, `${operationId} ${status}`, 1).catch(() => {});
}

/** One wait on the shared rate budget, before a request went out. */
export function countBudgetWait(redis: Redis, prefix: string, waitedMs: number): void {
  const key = fleetCounterKeys(prefix).budget;
  redis
    .multi()
    .hincrby(key, "waitMs", Math.round(waitedMs))
    .hincrby(key, "waits", 1)
    .exec()
    .catch(() => {});
}

export interface FleetCounters {
  responses: { operationId: string; status: number; count: number }[];
  budgetWaitMs: number;
  budgetWaits: number;
}

/** The counters as they are now. */
export async function readFleetCounters(redis: Redis, prefix: string): Promise<FleetCounters> {
  const keys = fleetCounterKeys(prefix);
  const [responses, budget] = await Promise.all([redis.hgetall(keys.responses), redis.hgetall(keys.budget)]);
  return {
    responses: Object.entries(responses).flatMap(([field, count]) => {
      const [operationId, status] = field.split(" ");
      return operationId && status ? [{ operationId, status: Number(status), count: Number(count) }] : [];
    }),
    budgetWaitMs: Number(budget.waitMs ?? 0),
    budgetWaits: Number(budget.waits ?? 0),
  };
}

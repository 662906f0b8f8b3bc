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

/** How often a process adds what it counted to the fleet's counters: one MULTI a second, not a command a request. */
const FLUSH_EVERY_MS = 1000;

/** What one process counts between flushes. */
export interface FleetCounting {
  response(operationId: string, status: number): void;
  budgetWait(waitedMs: number): void;
  /** Adds what is counted so far; called on close so a short run's counts are not lost. */
  flush(): Promise<void>;
}

/**
 * Counts in memory and adds to Redis once a second. A counter must never
 * slow a request (the flush is never awaited on a request's path), and a
 * flush lost while Redis restarts does not matter.
 */
export function fleetCounting(redis: Redis, prefix: string): FleetCounting {
  const keys = fleetCounterKeys(prefix);
  let responses = new Map<string, number>();
  let waitMs = 0;
  let waits = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = async () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (responses.size === 0 && waits === 0) return;
    const multi = redis.multi();
    for (const [field, n] of responses) multi.hincrby(keys.responses, field, n);
    if (waits > 0)
      multi.hincrby(keys.budget, "waitMs", Math.round(waitMs)).hincrby(keys.budget, "waits", waits);
    responses = new Map();
    waitMs = 0;
    waits = 0;
    await multi.exec().catch(() => {});
  };
  const later = () => {
    timer ??= setTimeout(() => void flush(), FLUSH_EVERY_MS);
    timer.unref();
  };
  return {
    response(operationId, status) {
      const field = `${operationId} ${status}`;
      responses.set(field, (responses.get(field) ?? 0) + 1);
      later();
    },
    budgetWait(waitedMs) {
      waitMs += waitedMs;
      waits++;
      later();
    },
    flush,
  };
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

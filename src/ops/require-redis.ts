import type { Redis } from "ioredis";
import { OpsHttpError } from "./ops-http-error.ts";

/**
 * A preHandler for routes that read Redis: while the connection is not up,
 * commands would wait in ioredis's offline queue for a minute, so the route
 * answers 503 at once instead.
 */
export function requireRedis(redis: Redis): () => Promise<void> {
  return async () => {
    if (redis.status !== "ready") {
      throw new OpsHttpError(
        503,
        "ops_redis_down",
        `Redis does not answer (connection ${redis.status}): the queues, the budget and the metrics live there; see /readyz`,
      );
    }
  };
}

import type { Logger } from "pino";
import type { RuntimeConfig } from "../config/index.ts";
import type { OnWait, Priority } from "../governor/index.ts";
import { connectRedis, type RedisConnection } from "./redis-connection.ts";
import { checkServiceSettings, createServiceClient, type ServiceClient } from "./service-client.ts";

/**
 * What a way in (the CLI, a queue worker, the demo) hands the runner besides
 * the run itself: where things are, and how it wants to hear of the run.
 */
export interface RunContext {
  config: RuntimeConfig;
  /** A connection to reuse (a worker's); left open. Without one the runner opens its own when it needs Redis. */
  redis?: RedisConnection;
  /** Who runs it, as another contender for the run lock will read it: host, pid, job id. */
  holder: string;
  /** Share the rate budget through Redis (default true; `--no-shared-budget` turns it off). */
  shareBudget?: boolean;
  /** `background` for scheduled work, so a person's run takes the next slot first. */
  priority?: Priority;
  /** A budget wait longer than this pauses the run (BudgetPausedError) instead of holding it. */
  pauseBeyondMs?: number;
  /** Add answers and budget waits to the fleet's counters (the workers do, for /metrics). */
  countForFleet?: boolean;
  /** Stops the run; an import still waits for the answers of requests already sent (runImport's `signal`). */
  signal?: AbortSignal;
  /** After a stop, gives up on those answers: the stop's deadline (runImport's `abandon`). */
  abandon?: AbortSignal;
  /** Phases and counts only: never a person's data. */
  logger?: Logger;
  /** Hears of every wait on the shared budget, as it begins. */
  onBudgetWait?: OnWait;
}

/** The Redis connection and service client of one run, closed together in reverse order of opening. */
export interface RunResources {
  redis: RedisConnection | undefined;
  service: ServiceClient | undefined;
  close(): Promise<void>;
}

/**
 * Opens what a run needs: Redis when `need.redis` or the service client
 * shares the budget (the context's connection, else its own), and the
 * service client when `need.service`. The token and the service's address are
 * checked before anything is opened; whatever was opened is closed again if a
 * later step fails.
 */
export async function openRunResources(
  ctx: RunContext,
  need: { redis: boolean; service: boolean; why: string },
): Promise<RunResources> {
  let owned: RedisConnection | undefined;
  let service: ServiceClient | undefined;
  const close = async () => {
    await service?.close();
    owned?.disconnect();
  };
  if (need.service) checkServiceSettings(ctx.config);
  try {
    const sharing = ctx.shareBudget !== false;
    const redis =
      ctx.redis ??
      (need.redis || (need.service && sharing) ? await connectRedis(ctx.config, need.why) : undefined);
    if (!ctx.redis) owned = redis;
    if (need.service) {
      service = await createServiceClient(ctx.config, {
        shareBudget: sharing,
        ...(redis ? { redis } : {}),
        ...(ctx.logger ? { logger: ctx.logger } : {}),
        ...(ctx.priority ? { priority: ctx.priority } : {}),
        ...(ctx.pauseBeyondMs === undefined ? {} : { pauseBeyondMs: ctx.pauseBeyondMs }),
        ...(ctx.countForFleet ? { countForFleet: true } : {}),
        ...(ctx.onBudgetWait ? { onBudgetWait: ctx.onBudgetWait } : {}),
      });
    }
    return { redis, service, close };
  } catch (err) {
    await close();
    throw err;
  }
}

import { type JobsOptions, Queue, type WorkerOptions } from "bullmq";
import type { RuntimeConfig } from "../config/index.ts";
import { createRedisConnection, type RedisConnection } from "../runtime/index.ts";
import type { ExportJobDataInput, ImportJobDataInput, JobOrigin } from "./job-data.ts";

export const QUEUE_NAMES = { imports: "imports", exports: "exports" } as const;

/** BullMQ priorities: lower runs first. Work a person waits for goes before the nightly sync. */
export function priorityOf(origin: JobOrigin): number {
  return origin === "schedule" ? 10 : 1;
}

/**
 * One connection for BullMQ: it must wait out a Redis restart instead of
 * failing a command. An ioredis Cluster when redis.url is
 * redis+cluster://…; BullMQ then needs the hash-tagged prefix config asks for.
 */
export function queueConnection(config: RuntimeConfig): RedisConnection {
  const redis = createRedisConnection(config.redis.url, { forQueue: true, lazyConnect: false });
  // Each BullMQ object reports its own connection errors; without a listener ioredis prints them raw.
  redis.on("error", () => {});
  return redis;
}

/** The options every job gets unless it says otherwise. */
export function defaultJobOptions(config: RuntimeConfig): JobsOptions {
  return {
    attempts: config.queue.attempts,
    backoff: { type: "exponential", delay: config.queue.backoffMs },
    removeOnComplete: { count: config.queue.keepCompleted },
    removeOnFail: { count: config.queue.keepFailed },
  };
}

/** The options of our workers on either queue, but for `concurrency` (per queue, from config). */
export function workerOptions(config: RuntimeConfig, connection: RedisConnection): WorkerOptions {
  return {
    connection,
    prefix: config.redis.prefix,
    lockDuration: config.queue.lockMs,
    stalledInterval: Math.max(1000, Math.floor(config.queue.lockMs / 2)),
    // A job killed with its worker is run again; one killed again and again is given up on.
    maxStalledCount: 3,
    // queue.rateLimit() after a 429 pauses the queue; BullMQ wants a limiter on the worker for that.
    limiter: { max: 10_000, duration: 1000 },
  };
}

export interface Queues {
  imports: Queue<ImportJobDataInput>;
  exports: Queue<ExportJobDataInput>;
  close(): Promise<void>;
}

/** The two queues under the configured prefix (a hash tag such as `{recruit-sync}` on Redis Cluster). */
export function openQueues(config: RuntimeConfig, connection: RedisConnection): Queues {
  const options = {
    connection,
    prefix: config.redis.prefix,
    defaultJobOptions: defaultJobOptions(config),
  };
  const imports = new Queue<ImportJobDataInput>(QUEUE_NAMES.imports, options);
  const exports = new Queue<ExportJobDataInput>(QUEUE_NAMES.exports, options);
  for (const q of [imports, exports]) q.on("error", () => {});
  return {
    imports,
    exports,
    async close() {
      await Promise.all([imports.close(), exports.close()]);
    },
  };
}

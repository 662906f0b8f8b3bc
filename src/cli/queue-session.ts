import type { RuntimeConfig } from "../config/index.ts";
import { openQueues, type Queues } from "../queue/index.ts";
import { connectRedis, type RedisConnection } from "../runtime/index.ts";

/** The queues as the CLI uses them: one connection, a clear line when Redis is not there. */
export async function openQueueSession(
  config: RuntimeConfig,
): Promise<{ queues: Queues; close(): Promise<void> }> {
  const redis: RedisConnection = await connectRedis(config, "the queues live there; or run with --inline");
  const queues = openQueues(config, redis);
  return {
    queues,
    async close() {
      await queues.close().catch(() => {});
      redis.disconnect();
    },
  };
}

/** Runs `use` with the queues open, and closes them however it ends. */
export async function withQueueSession<T>(
  config: RuntimeConfig,
  use: (queues: Queues) => Promise<T>,
): Promise<T> {
  const session = await openQueueSession(config);
  try {
    return await use(session.queues);
  } finally {
    await session.close();
  }
}

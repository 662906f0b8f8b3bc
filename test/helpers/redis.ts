import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { REDIS_URL } from "./env.ts";

export interface TestRedis {
  redis: Redis;
  /** A key prefix no other test uses; every key this test makes starts with it. */
  prefix: string;
  /** Deletes the keys under `prefix` and closes the connection. */
  cleanup(): Promise<void>;
}

/** A Redis connection and a `test-<uuid>` key prefix owned by one test. */
export async function withTestRedis(): Promise<TestRedis> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null, lazyConnect: true });
  await redis.connect();
  const prefix = `test-${randomUUID()}`;
  return {
    redis,
    prefix,
    async cleanup() {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== "0");
      redis.disconnect();
    },
  };
}

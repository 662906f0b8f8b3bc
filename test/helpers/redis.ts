import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { deleteKeysByPrefix } from "../../src/runtime/delete-keys.ts";
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
      await deleteKeysByPrefix(redis, prefix);
      redis.disconnect();
    },
  };
}

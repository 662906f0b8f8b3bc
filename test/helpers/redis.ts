import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterEach } from "vitest";
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

/**
 * For a test file: `cleanups` run in reverse after each test, and `redisFor`
 * gives a TestRedis whose keys and connection go with them.
 */
export function cleanupsPerTest(): {
  cleanups: (() => Promise<void>)[];
  redisFor: () => Promise<TestRedis>;
} {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  return {
    cleanups,
    async redisFor() {
      const r = await withTestRedis();
      cleanups.push(r.cleanup);
      return r;
    },
  };
}

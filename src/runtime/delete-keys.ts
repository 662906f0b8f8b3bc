import type { Redis } from "ioredis";

/**
 * Deletes every key whose name starts with `prefix` (SCAN, so Redis is never
 * blocked by a KEYS over a large database): the demo's, a bench's or a test's
 * own keys under the prefix it chose. Returns how many it deleted.
 */
export async function deleteKeysByPrefix(redis: Redis, prefix: string): Promise<number> {
  let deleted = 0;
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    if (keys.length) deleted += await redis.unlink(...keys);
  } while (cursor !== "0");
  return deleted;
}

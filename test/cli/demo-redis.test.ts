import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ensureRedis, freePort } from "../../src/cli/demo/ensure-redis.ts";
import { ConfigError } from "../../src/errors/index.ts";
import { REDIS_URL } from "../helpers/env.ts";

describe("the demo's Redis", () => {
  it("passes over a REDIS_URL that does not answer and says so", async () => {
    const dead = `redis://127.0.0.1:${await freePort()}`;
    const redis = await ensureRedis({ envUrl: dead, defaultUrl: REDIS_URL });
    expect(redis.url).toBe(REDIS_URL);
    expect(redis.source).toBe("default");
    expect(redis.passedOver).toBe(dead);
  });

  it("says how to get one when nothing answers and redis-server is not on PATH", async () => {
    const dead = `redis://127.0.0.1:${await freePort()}`;
    const path0 = process.env.PATH;
    // A PATH with no redis-server on it; spawn looks the binary up there.
    process.env.PATH = mkdtempSync(path.join(tmpdir(), "no-redis-"));
    try {
      const err = await ensureRedis({ envUrl: dead, defaultUrl: dead }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain("redis-server is not on PATH");
      expect((err as Error).message).toContain("apt-get install redis-server");
    } finally {
      process.env.PATH = path0;
    }
  });
});

import { Cluster, Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { type Check, checkRedisDurability } from "../../src/ops/readiness.ts";
import { startRedisCluster, type TestRedisCluster } from "../helpers/redis-cluster.ts";
import { call, type OpsProject, withOpsProject } from "./ops-fixture.ts";
import { startThrowawayRedis, type ThrowawayRedis } from "./redis-server.ts";

type Ready = { status: string; down?: string[]; degraded?: string[]; checks: Check[] };

const check = (body: Ready, name: Check["name"]) => body.checks.find((c) => c.name === name);

describe("/readyz on the Redis the queues live in", () => {
  let redis: ThrowawayRedis | undefined;
  let project: OpsProject | undefined;
  let ops: OpsServer | undefined;

  afterEach(async () => {
    await ops?.close();
    await project?.cleanup();
    await redis?.stop();
    ops = undefined;
    project = undefined;
    redis = undefined;
  });

  /** /readyz on the probe port (no password) of an ops server on a redis-server started with `args`. */
  async function readyz(args: string[], redisUrl?: (r: ThrowawayRedis) => Promise<string>) {
    redis = await startThrowawayRedis(args);
    project = await withOpsProject({ redisUrl: redisUrl ? await redisUrl(redis) : redis.url });
    ops = await startOpsServer({ config: project.config, logger: project.logger, probePort: 0 });
    const res = await call(`${ops.probeUrl}/readyz`);
    return { status: res.status, body: res.body as Ready, text: res.text };
  }

  it("answers 200 'degraded' for a Redis that keeps nothing on disk, saying to turn on AOF", async () => {
    const res = await readyz(["--save", "", "--appendonly", "no"]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe("degraded");
    expect(res.body.down).toBeUndefined();
    expect(check(res.body, "redis-persistence")).toEqual({
      name: "redis-persistence",
      ok: true,
      state: "degraded",
      detail:
        "nothing is kept on disk (appendonly no, no save points): a restart of Redis loses every queued job, schedule and import record",
      fix: expect.stringContaining("appendonly yes"),
    });
    expect(check(res.body, "redis-eviction")).toMatchObject({ state: "ok" });
    expect(res.body.degraded).toEqual([
      expect.stringMatching(/^redis-persistence: nothing is kept on disk.*appendonly yes/),
    ]);
  });

  it("answers 200 'ready' for a Redis with AOF on and noeviction", async () => {
    const res = await readyz(["--appendonly", "yes", "--save", ""]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe("ready");
    expect(res.body.degraded).toBeUndefined();
    expect(res.body.checks.map((c) => [c.name, c.state])).toEqual([
      ["redis", "ok"],
      ["redis-persistence", "ok"],
      ["redis-eviction", "ok"],
      ["warehouse", "ok"],
      ["job-definitions", "ok"],
    ]);
    expect(check(res.body, "redis-persistence")?.detail).toBe("AOF on (appendonly yes)");
    expect(check(res.body, "redis-eviction")?.detail).toBe("maxmemory-policy noeviction");
  });

  it("takes RDB save points alone as keeping the data, and says what a crash loses", async () => {
    const res = await readyz(["--appendonly", "no", "--save", "60 1"]);
    expect(res.body.status).toBe("ready");
    expect(check(res.body, "redis-persistence")).toMatchObject({
      state: "ok",
      detail: expect.stringMatching(/^RDB snapshots only \(save 60 1\): a crash loses/),
    });
  });

  it("answers 200 'degraded' for a Redis that evicts keys, saying to set noeviction", async () => {
    const res = await readyz(["--appendonly", "yes", "--maxmemory-policy", "allkeys-lru"]);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("degraded");
    expect(check(res.body, "redis-eviction")).toMatchObject({
      ok: true,
      state: "degraded",
      detail: expect.stringContaining("maxmemory-policy allkeys-lru"),
      fix: expect.stringContaining("maxmemory-policy noeviction"),
    });
    expect(res.body.degraded).toEqual([expect.stringMatching(/^redis-eviction: /)]);
  });

  describe("where CONFIG is refused, as on managed Redis", () => {
    /** A user that may do everything but CONFIG (and `also` refused). */
    const restricted =
      (also: string[] = []) =>
      async (r: ThrowawayRedis) => {
        const admin = new Redis(r.url);
        await admin.call("ACL", "SETUSER", "app", "on", ">app-pw", "~*", "&*", "+@all", "-config", ...also);
        admin.disconnect();
        return `redis://app:app-pw@127.0.0.1:${r.port}`;
      };

    it("reads AOF and the eviction policy from INFO instead", async () => {
      const res = await readyz(["--appendonly", "yes"], restricted());
      expect(res.body.status).toBe("ready");
      expect(check(res.body, "redis-persistence")).toMatchObject({
        state: "ok",
        detail: "AOF on (appendonly yes)",
      });
      expect(check(res.body, "redis-eviction")).toMatchObject({ state: "ok" });
    });

    it("reports an evicting policy read from INFO memory", async () => {
      const res = await readyz(["--appendonly", "yes", "--maxmemory-policy", "volatile-lru"], restricted());
      expect(res.body.status).toBe("degraded");
      expect(check(res.body, "redis-eviction")?.detail).toContain("maxmemory-policy volatile-lru");
    });

    it("says unknown, not failing, when AOF is off and the save points cannot be read", async () => {
      const res = await readyz(["--appendonly", "no", "--save", ""], restricted());
      expect(res.status).toBe(200);
      expect(res.body.status).toBe("ready");
      expect(check(res.body, "redis-persistence")).toMatchObject({
        ok: true,
        state: "unknown",
        detail: "AOF is off, and whether RDB snapshots are taken cannot be read (CONFIG is refused)",
      });
    });
  });

  it("says unknown for both, and stays ready, when CONFIG and INFO are both refused", async () => {
    redis = await startThrowawayRedis(["--appendonly", "no", "--save", ""]);
    const admin = new Redis(redis.url);
    await admin.call("ACL", "SETUSER", "app", "on", ">app-pw", "~*", "&*", "+@all", "-config", "-info");
    admin.disconnect();
    const client = new Redis(`redis://app:app-pw@127.0.0.1:${redis.port}`, { lazyConnect: true });
    await client.connect();
    try {
      const checks = await checkRedisDurability(client);
      expect(checks.map((c) => [c.name, c.ok, c.state])).toEqual([
        ["redis-persistence", true, "unknown"],
        ["redis-eviction", true, "unknown"],
      ]);
      expect(checks[0]?.detail).toBe("cannot be read: CONFIG GET and INFO persistence are refused");
    } finally {
      client.disconnect();
    }
  });
});

describe("the durability of a Redis Cluster", () => {
  let cluster: TestRedisCluster;
  let client: Cluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = new Cluster(cluster.ports.map((port) => ({ host: "127.0.0.1", port })));
    await new Promise((resolve) => client.once("ready", resolve));
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it("is read on every master and reported for the node that keeps nothing on disk", async () => {
    const checks = await checkRedisDurability(client);
    expect(checks[0]).toMatchObject({
      name: "redis-persistence",
      state: "degraded",
      detail: expect.stringMatching(/^127\.0\.0\.1:\d+: nothing is kept on disk/),
    });
    const [first] = cluster.nodes();
    await first?.config("SET", "maxmemory-policy", "allkeys-lru");
    const again = await checkRedisDurability(client);
    expect(again[1]).toMatchObject({
      name: "redis-eviction",
      state: "degraded",
      detail: expect.stringMatching(
        new RegExp(`^127\\.0\\.0\\.1:${cluster.ports[0]}: maxmemory-policy allkeys-lru`),
      ),
    });
  });
});

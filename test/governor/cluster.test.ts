import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as scripts from "../../src/governor/governor-script.ts";
import { budgetKeys, createRateGovernor, keyList } from "../../src/governor/index.ts";
import { NOTHING_ON_DISK, spawnOwnRedis } from "../helpers/redis-process.ts";

// ioredis computes slots with cluster-key-slot but does not export it; take ioredis's own copy.
const fromIoredis = createRequire(createRequire(import.meta.url).resolve("ioredis"));
const keySlot = fromIoredis("cluster-key-slot") as (key: string) => number;

const PREFIXES = ["recruit-sync", "{recruit-sync}", "test-3f2a", "a{b}c"];

describe("the governor on Redis Cluster", () => {
  it.each(PREFIXES)("puts every key of a budget in one hash slot (prefix %s)", (prefix) => {
    for (const [service, token] of [
      ["http://127.0.0.1:4010/api/public/v1", "tok"],
      ["https://svc.test/api/public/v1/", "another"],
    ] as const) {
      const slots = new Set(keyList(budgetKeys(prefix, service, token)).map(keySlot));
      expect(slots.size).toBe(1);
    }
  });

  it("spreads the budgets of different tokens over different slots when the prefix has no tag", () => {
    const slots = new Set(
      Array.from({ length: 20 }, (_, i) => keySlot(budgetKeys("recruit-sync", "http://svc", `t${i}`).state)),
    );
    expect(slots.size).toBeGreaterThan(1);
  });

  it("has every script touch only the keys it is given in KEYS", () => {
    for (const [name, source] of Object.entries(scripts)) {
      for (const m of source.matchAll(/redis\.call\('(\w+)'(?:,\s*([^,)]+))?/g)) {
        const [, command, key] = m;
        if (command === "TIME") continue;
        // waitKey is KEYS[3] or KEYS[4], chosen by priority.
        expect(`${name}: ${command} ${key}`).toMatch(/: \w+ (KEYS\[[1-4]\]|waitKey)$/);
      }
    }
  });
});

describe("the governor against a real Redis Cluster node", () => {
  let dir: string;
  let server: ChildProcess;
  let cluster: Cluster;
  let port: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "governor-cluster-"));
    // A port whose cluster bus port (port + 10000) is taken makes the node exit: spawnOwnRedis then tries another.
    ({ port, child: server } = await spawnOwnRedis((p) => [
      "--cluster-enabled",
      "yes",
      // Otherwise the node announces an empty address and the client cannot follow the slot map.
      "--cluster-announce-ip",
      "127.0.0.1",
      "--cluster-config-file",
      join(dir, `nodes-${p}.conf`),
      "--dir",
      dir,
      ...NOTHING_ON_DISK,
    ]));
    // One master holding every slot: cross-slot scripts fail here exactly as on a bigger cluster.
    const admin = new Redis({ port, host: "127.0.0.1", retryStrategy: () => 50, maxRetriesPerRequest: null });
    // Refused connections while the server starts are expected; the ping waits for it.
    admin.on("error", () => undefined);
    await admin.ping();
    await admin.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
    while (!String(await admin.call("CLUSTER", "INFO")).includes("cluster_state:ok")) {
      await new Promise((r) => setTimeout(r, 50));
    }
    admin.disconnect();
    cluster = new Cluster([{ host: "127.0.0.1", port }]);
  });

  afterAll(async () => {
    cluster?.disconnect();
    server?.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  it.each(PREFIXES)("acquires, observes, waits, releases and reports state (prefix %s)", async (prefix) => {
    const g = createRateGovernor({ redis: cluster, token: "t", service: "http://svc", prefix });
    const permit = await g.acquire();
    const unanswered = await g.acquire();
    await g.observe(
      {
        rateLimit: {
          limit: 2,
          remaining: 0,
          resetAt: Date.now() + 60_000,
          resetUnit: "delta-seconds",
          resetPrecisionMs: 1000,
        },
        retryAfterMs: undefined,
        receivedAt: Date.now(),
      },
      permit,
    );
    const ac = new AbortController();
    const waiting = g.acquire({ priority: "background", signal: ac.signal });
    while ((await g.state()).waiting.background === 0) await new Promise((r) => setTimeout(r, 20));
    ac.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    await g.release(unanswered);
    expect(await g.state()).toMatchObject({ limit: 2, remaining: 0, inFlight: 0 });
  });
});

import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { Queue } from "bullmq";
import { Cluster, type Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type RuntimeConfig } from "../../src/config/index.ts";
import { ConfigError } from "../../src/errors/index.ts";
import { hashFile, hashValue } from "../../src/imports/index.ts";
import { createLogger } from "../../src/logger/index.ts";
import {
  enqueueExport,
  enqueueImport,
  exportLockKeys,
  followJob,
  importLockKey,
  openQueues,
  type Queues,
  queueConnection,
  type RunningWorker,
  startWorker,
} from "../../src/queue/index.ts";
import {
  connectRedis,
  createRedisConnection,
  type RedisConnection,
  resolveImportDefinition,
  takeRunLock,
} from "../../src/runtime/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { startRedisCluster, type TestRedisCluster } from "../helpers/redis-cluster.ts";

const repo = path.resolve(".");
const sample = path.join(repo, "samples", "hubspot-contacts.csv");

/** Every key on every master whose name starts with `prefix`. */
async function keysUnder(nodes: Redis[], prefix: string): Promise<{ node: number; key: string }[]> {
  const out: { node: number; key: string }[] = [];
  for (const [i, node] of nodes.entries()) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      for (const key of keys) out.push({ node: i, key });
    } while (cursor !== "0");
  }
  return out;
}

async function slotOf(node: Redis, key: string): Promise<number> {
  return Number(await node.call("CLUSTER", "KEYSLOT", key));
}

describe("the queue runtime on a 3-master Redis Cluster", () => {
  let cluster: TestRedisCluster;
  let emu: TestEmulator;
  let dir: string;
  let config: RuntimeConfig;
  let worker: RunningWorker;
  let connection: RedisConnection;
  let queues: Queues;
  const prefix = `{test-${randomUUID()}}`;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    emu = await startTestEmulator();
    dir = await mkdtemp(path.join(tmpdir(), "recruit-sync-cluster-"));
    await mkdir(path.join(dir, "config"));
    await writeFile(
      path.join(dir, "config", "default.yaml"),
      [
        "service:",
        `  baseUrl: ${emu.baseUrl}`,
        "  retry: { maxAttempts: 3, baseDelayMs: 50, maxDelayMs: 500 }",
        "redis:",
        `  url: "${cluster.url}"`,
        `  prefix: "${prefix}"`,
        "warehouse:",
        "  url: duckdb:./data/warehouse.duckdb",
        "paths:",
        `  jobsDir: ${path.join(repo, "jobs")}`,
        "  dataDir: ./data",
        "log: { level: silent }",
        "queue: { attempts: 1, lockMs: 5000, shutdownDeadlineMs: 5000 }",
        "",
      ].join("\n"),
    );
    config = loadConfig({ configDir: path.join(dir, "config"), env: { RECRUIT_SYNC_API_TOKEN: emu.token } });
    worker = await startWorker({
      config,
      logger: createLogger({ level: "silent" }),
      schedules: false,
      watch: false,
    });
    connection = queueConnection(config);
    queues = openQueues(config, connection);
  }, 60_000);

  afterAll(async () => {
    await worker?.stop();
    await queues?.close();
    connection?.disconnect();
    await emu?.close();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("connects with an ioredis Cluster when redis.url is redis+cluster://", async () => {
    expect(config.redis.url).toMatch(
      /^redis\+cluster:\/\/127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/,
    );
    const redis = await connectRedis(config, "the test");
    try {
      expect(redis).toBeInstanceOf(Cluster);
      expect(connection).toBeInstanceOf(Cluster);
    } finally {
      redis.disconnect();
    }
  });

  it("runs an import through the imports queue and records it in the ledger", async () => {
    const enqueued = await enqueueImport(
      config,
      queues,
      { job: "hubspot-contacts", file: sample, origin: "cli" },
      { givenAtShell: true },
    );
    const end = await followJob(queues.imports, enqueued.jobId, () => {});
    expect(end.failedReason).toBeUndefined();
    expect(end.state).toBe("completed");
    const report = end.returnvalue as { status: string; imported: number; rowsRead: number };
    expect(report.status).toBe("completed");
    expect(report.imported).toBeGreaterThan(0);

    const ledgers = (await keysUnder(cluster.nodes(), prefix)).filter((k) =>
      k.key.includes(":import-ledger:"),
    );
    expect(ledgers).toHaveLength(1);
    const ledger = ledgers[0] as { node: number; key: string };
    const run = JSON.parse((await cluster.nodes()[ledger.node]?.hget(ledger.key, "run")) ?? "{}");
    expect(run.status).toBe("done");
    const requests = await emu.requests();
    expect(requests.byStatus["429"] ?? 0).toBe(0);
  }, 60_000);

  it("compares re-imports with the change-only state on the Cluster, and records what it sent", async () => {
    const header =
      '"Record ID","First Name","Last Name","Email","Phone Number","Mobile Phone Number","Lifecycle Stage","Company Name","Job Title","Last Contacted","Additional email addresses","Research opt-out","Create Date"';
    const rows = Array.from(
      { length: 40 },
      (_v, i) =>
        `"${i}","Ann${i}","Lee","cluster${i}@example.org","(415) 555-01${String(i).padStart(2, "0")}","","lead","Acme","Analyst","2024-03-05 14:22","","yes","2023-11-02 09:10"`,
    );
    const run = async (name: string, text: string) => {
      const file = path.join(dir, name);
      await writeFile(file, text);
      const enqueued = await enqueueImport(
        config,
        queues,
        { job: "hubspot-contacts", file, origin: "cli" },
        { givenAtShell: true },
      );
      const end = await followJob(queues.imports, enqueued.jobId, () => {});
      expect(end.failedReason).toBeUndefined();
      return end.returnvalue as { changeState: string; imported: number; unchanged: number };
    };
    const first = await run("cluster-people.csv", `${[header, ...rows].join("\n")}\n`);
    // New people to the state the sample's import left: all 40 sent, and recorded as their answers come.
    expect(first).toMatchObject({ changeState: "compared", imported: 40, unchanged: 0 });
    // The same rows with CRLF line ends: other bytes (the ledger does not skip it), nobody changed.
    const again = await run("cluster-people-crlf.csv", `${[header, ...rows].join("\r\n")}\r\n`);
    expect(again).toMatchObject({ changeState: "compared", imported: 0, unchanged: 40 });
  }, 60_000);

  it("runs an export through the exports queue into the warehouse", async () => {
    const warehouse = `duckdb:${path.join(dir, "export.duckdb")}`;
    const enqueued = await enqueueExport(config, queues, {
      job: "nightly-export",
      resources: ["participants"],
      studies: ["study_1"],
      warehouse,
      origin: "cli",
    });
    const end = await followJob(queues.exports, enqueued.jobId, () => {});
    expect(end.failedReason).toBeUndefined();
    expect(end.state).toBe("completed");
    const report = end.returnvalue as { status: string; totals: { rows: number } };
    expect(report.status).toBe("succeeded");

    const snapshot = await emu.snapshot();
    const expected = snapshot.participants.filter((p) => p.studyId === "study_1").length;
    expect(expected).toBeGreaterThan(0);
    const db = await DuckDBInstance.create(path.join(dir, "export.duckdb"));
    const conn = await db.connect();
    try {
      const rows = (await conn.runAndReadAll("select count(*) from participants")).getRows();
      expect(Number(rows[0]?.[0])).toBe(expected);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  }, 60_000);

  it("keeps every key the runtime made — BullMQ's, the ledger's, the governor's — in the prefix's slot", async () => {
    const keys = await keysUnder(cluster.nodes(), prefix);
    // The queues, the jobs, the ledger and the shared budget all left keys behind.
    expect(keys.some((k) => k.key.startsWith(`${prefix}:imports:`))).toBe(true);
    expect(keys.some((k) => k.key.startsWith(`${prefix}:exports:`))).toBe(true);
    expect(keys.some((k) => k.key.includes(":import-ledger:"))).toBe(true);
    expect(keys.some((k) => k.key.includes(":governor:"))).toBe(true);
    const node = cluster.nodes()[0] as Redis;
    const want = await slotOf(node, prefix);
    const slots = new Set(await Promise.all(keys.map((k) => slotOf(node, k.key))));
    expect([...slots]).toEqual([want]);
    // One slot lives on one master: a script given any of these keys runs there whole.
    expect(new Set(keys.map((k) => k.node)).size).toBe(1);
  });

  it("builds the run-lock keys of imports and exports in the same slot, and takes and frees them on the cluster", async () => {
    const { definition } = await resolveImportDefinition({ job: "hubspot-contacts" }, config.paths.jobsDir);
    const lockKeys = [
      importLockKey(prefix, await hashFile(sample), hashValue(definition)),
      ...exportLockKeys(prefix, "duckdb:/tmp/w.duckdb", ["participants"]),
      ...exportLockKeys(prefix, "postgres://db/w", ["participants", "incentives", "segments"]),
    ];
    const node = cluster.nodes()[0] as Redis;
    const want = await slotOf(node, prefix);
    for (const key of lockKeys) expect({ key, slot: await slotOf(node, key) }).toEqual({ key, slot: want });

    const redis = await connectRedis(config, "the test");
    try {
      const lock = await takeRunLock(
        { redis, key: lockKeys[0] as string, holder: "test", leaseMs: 3000 },
        "x",
      );
      // RENEW runs every second: the lease must still be ours after it has run.
      await new Promise((r) => setTimeout(r, 1500));
      expect(lock.lost.aborted).toBe(false);
      await lock.release();
      expect(await redis.exists(lockKeys[0] as string)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  it("refuses a cluster URL with a prefix that has no hash tag, which the cluster would refuse with CROSSSLOT", async () => {
    const env = { REDIS_URL: cluster.url, RECRUIT_SYNC_API_TOKEN: "t" };
    const untagged = path.join(dir, "untagged");
    await mkdir(untagged);
    await writeFile(
      path.join(untagged, "default.yaml"),
      [
        "service: { baseUrl: http://127.0.0.1:1/api/public/v1 }",
        "redis: { url: redis://unused, prefix: recruit-sync }",
        "warehouse: { url: 'duckdb:./w.duckdb' }",
        "paths: { jobsDir: ./jobs, dataDir: ./data }",
        "",
      ].join("\n"),
    );
    expect(() => loadConfig({ configDir: untagged, env })).toThrow(ConfigError);
    expect(() => loadConfig({ configDir: untagged, env })).toThrow(
      /redis\.prefix: .*hash tag.*\{recruit-sync\}/,
    );

    // Why: BullMQ's scripts take several keys of one queue, which an untagged prefix spreads over slots.
    const raw = createRedisConnection(cluster.url, { forQueue: true, lazyConnect: false });
    raw.on("error", () => {});
    const queue = new Queue(`untagged-${randomUUID()}`, { connection: raw, prefix: "untagged" });
    queue.on("error", () => {});
    try {
      await expect(queue.add("x", {})).rejects.toThrow(/CROSSSLOT/);
    } finally {
      await queue.close();
      raw.disconnect();
    }
  });

  it("says where it looked when no cluster node answers", async () => {
    const dead = { ...config, redis: { ...config.redis, url: "redis+cluster://127.0.0.1:1,127.0.0.1:2" } };
    await expect(connectRedis(dead, "the test")).rejects.toThrow(
      /Redis does not answer at redis\+cluster:\/\/127\.0\.0\.1:1,127\.0\.0\.1:2 \(the test\)/,
    );
  });
});

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";

const run = promisify(execFile);

export interface TestRedisCluster {
  ports: number[];
  /** redis+cluster://127.0.0.1:P1,127.0.0.1:P2,… — the form config redis.url takes. */
  url: string;
  /** One direct connection per master, for SCAN and CLUSTER commands. */
  nodes(): Redis[];
  /** Stops every node and removes their files. */
  stop(): Promise<void>;
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A free loopback port whose cluster bus port (port + 10000) is free as well. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    const p = port > 55_535 ? port - 20_000 : port;
    if (taken.has(p) || taken.has(p + 10_000)) continue;
    if ((await listenable(p)) && (await listenable(p + 10_000))) return p;
  }
  throw new Error("no free port pair for a cluster node");
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts a Redis Cluster of `masters` nodes (no replicas) from the system's
 * redis-server on free loopback ports, nothing kept on disk beyond the
 * cluster config files in a temp folder, and waits for cluster_state:ok.
 */
export async function startRedisCluster(masters = 3): Promise<TestRedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), "redis-cluster-"));
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < masters; i++) {
    const port = await freeClusterPort(taken);
    taken.add(port);
    taken.add(port + 10_000);
    ports.push(port);
  }
  const servers: ChildProcess[] = [];
  const clients: Redis[] = [];
  const stop = async () => {
    for (const c of clients) c.disconnect();
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            if (s.exitCode !== null || s.signalCode !== null) return resolve();
            s.once("exit", () => resolve());
            s.kill("SIGTERM");
          }),
      ),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      const server = spawn(
        "redis-server",
        [
          "--port",
          String(port),
          "--bind",
          "127.0.0.1",
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          join(dir, `nodes-${port}.conf`),
          // Nodes tell clients where they are; without it a lone node's own address is empty.
          "--cluster-announce-ip",
          "127.0.0.1",
          "--dir",
          dir,
          "--save",
          "",
          "--appendonly",
          "no",
        ],
        { stdio: "ignore" },
      );
      servers.push(server);
      const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 1 });
      client.on("error", () => {});
      clients.push(client);
    }
    for (const client of clients)
      await until("redis-server to answer", async () => (await client.ping()) === "PONG");
    await run("redis-cli", [
      "--cluster",
      "create",
      ...ports.map((p) => `127.0.0.1:${p}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ]);
    for (const client of clients) {
      await until("cluster_state:ok", async () =>
        String(await client.call("CLUSTER", "INFO")).includes("cluster_state:ok"),
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    ports,
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(",")}`,
    nodes: () => clients,
    stop,
  };
}

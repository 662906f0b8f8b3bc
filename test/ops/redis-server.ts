import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { vi } from "vitest";

export interface ThrowawayRedis {
  port: number;
  url: string;
  /** Its working folder (AOF and RDB files land here), removed by stop(). */
  dir: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A redis-server of one test's own on a free loopback port, in a temporary
 * folder, started with `args` (e.g. `--appendonly yes`), answering PING
 * before this resolves.
 */
export async function startThrowawayRedis(args: string[]): Promise<ThrowawayRedis> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), "recruit-sync-redis-"));
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, ...args],
    { stdio: "ignore" },
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true, retryStrategy: () => 100 });
  probe.on("error", () => {});
  try {
    await vi.waitFor(() => probe.ping(), { timeout: 10_000, interval: 100 });
  } catch (err) {
    await stop();
    throw err;
  } finally {
    probe.disconnect();
  }
  return { port, url: `redis://127.0.0.1:${port}`, dir, stop };
}

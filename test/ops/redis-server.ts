import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type OwnRedisProcess, spawnOwnRedis } from "../helpers/redis-process.ts";

export interface ThrowawayRedis {
  port: number;
  url: string;
  /** Its working folder (AOF and RDB files land here), removed by stop(). */
  dir: string;
  stop(): Promise<void>;
}

/**
 * A redis-server of one test's own on a free loopback port, in a temporary
 * folder, started with `args` (e.g. `--appendonly yes`), answering on its
 * port before this resolves.
 */
export async function startThrowawayRedis(args: string[]): Promise<ThrowawayRedis> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "recruit-sync-redis-"));
  let own: OwnRedisProcess;
  try {
    own = await spawnOwnRedis(["--dir", dir, ...args]);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const { port, child } = own;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  return { port, url: `redis://127.0.0.1:${port}`, dir, stop };
}

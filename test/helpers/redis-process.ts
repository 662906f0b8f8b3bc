import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import { once } from "node:events";
import { answersAs, freePort } from "../../src/cli/demo/ensure-redis.ts";

export { freePort };

export interface OwnRedisProcess {
  port: number;
  url: string;
  child: ChildProcess;
}

/** A server that keeps nothing on disk. */
export const NOTHING_ON_DISK = ["--save", "", "--appendonly", "no"];

interface SpawnOptions {
  stdio?: StdioOptions;
  /** Told of each server process as soon as it is spawned (to read its output, say). */
  onSpawn?: (child: ChildProcess) => void;
}

/** Settings given as they are, or made for the port picked. */
type ExtraArgs = readonly string[] | ((port: number) => string[]);

function argsOn(port: number, extra: ExtraArgs): string[] {
  return [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    ...(typeof extra === "function" ? extra(port) : extra),
  ];
}

/**
 * Spawns `redis-server` on a free loopback port with `extra` settings and
 * resolves once it answers there; a port lost to another server in the
 * meantime is given up for a new one, up to `attempts` times.
 */
export async function spawnOwnRedis(
  extra: ExtraArgs,
  options: SpawnOptions & { attempts?: number } = {},
): Promise<OwnRedisProcess> {
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn("redis-server", argsOn(port, extra), { stdio: options.stdio ?? "ignore" });
    options.onSpawn?.(child);
    if (await answersAs(port, child)) return { port, url: `redis://127.0.0.1:${port}`, child };
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
    if (attempt >= attempts) {
      throw new Error(`redis-server did not start on a free loopback port in ${attempts} attempts`);
    }
  }
}

/** Starts `redis-server` with `extra` again on `port` (a restart); fails if it is not the server answering there. */
export async function respawnRedisOn(
  port: number,
  extra: ExtraArgs,
  options: SpawnOptions = {},
): Promise<ChildProcess> {
  const child = spawn("redis-server", argsOn(port, extra), { stdio: options.stdio ?? "ignore" });
  options.onSpawn?.(child);
  if (await answersAs(port, child)) return child;
  child.kill("SIGKILL");
  throw new Error(`redis-server did not start again on port ${port}`);
}

/**
 * Stops a redis-server the test started and resolves once its process is gone. The exit is
 * listened for before the signal is sent, and a process already gone resolves at once: a
 * listener attached after the exit would wait forever.
 */
export async function stopRedisProcess(
  child: ChildProcess,
  signal: NodeJS.Signals = "SIGTERM",
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill(signal);
  await exited;
}

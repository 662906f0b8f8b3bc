import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { RunLockedError, takeRunLock } from "../../src/runtime/run-lock.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { cleanupsPerTest } from "../helpers/redis.ts";

const HOLDER = new URL("./fixtures/hold-run-lock.ts", import.meta.url).pathname;
const { cleanups, redisFor } = cleanupsPerTest();

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

/** A process of this host holding the lock `key`, once it said so. */
async function holderProcess(key: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", HOLDER], {
    env: { ...process.env, REDIS_URL, LOCK_KEY: key },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await Promise.race([
    once(lines, "line"),
    once(child, "exit").then(([code]) => {
      throw new Error(`the holder exited (${code}) before it held the lock`);
    }),
  ])) as [string];
  expect(line).toBe("locked");
  return child;
}

describe("a run lock", () => {
  it("whose holder on this host was killed is taken over at once, long before its lease ends", async () => {
    const r = await redisFor();
    const key = `${r.prefix}:lock:export:w1`;
    const holder = await holderProcess(key);
    holder.kill("SIGKILL");
    await once(holder, "exit");
    // The dead holder's lease has nearly a minute left.
    expect(await r.redis.pttl(key)).toBeGreaterThan(50_000);
    const lock = await takeRunLock(
      { redis: r.redis, key, holder: "the rerun", leaseMs: 60_000 },
      "an export",
    );
    cleanups.push(() => lock.release());
    expect(await r.redis.get(key)).toMatch(/^the rerun\|/);
  });

  it("whose holder on this host is alive is refused, naming the holder", async () => {
    const r = await redisFor();
    const key = `${r.prefix}:lock:export:w2`;
    const holder = await holderProcess(key);
    const taking = takeRunLock({ redis: r.redis, key, holder: "the rerun" }, "an export into this warehouse");
    await expect(taking).rejects.toThrow(RunLockedError);
    await expect(taking).rejects.toThrow(
      `an export into this warehouse is already running (test holder pid ${holder.pid}); wait for it to finish or stop it`,
    );
  });

  it("whose holder ran on another host, or wrote no host, waits for the lease", async () => {
    const r = await redisFor();
    for (const [name, value] of [
      // A pid that is surely gone here says nothing about a process of another host.
      ["another host", "job 7 on elsewhere pid 4194303|0000|elsewhere/boot/1|4194303"],
      ["no host", "an older worker|0000"],
    ]) {
      const key = `${r.prefix}:lock:export:${name}`;
      await r.redis.set(key, value ?? "", "PX", 60_000);
      await expect(takeRunLock({ redis: r.redis, key, holder: "the rerun" }, "an export")).rejects.toThrow(
        RunLockedError,
      );
      expect(await r.redis.get(key)).toBe(value);
    }
  });
});

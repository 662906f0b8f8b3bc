import { randomUUID } from "node:crypto";
import { RecruitSyncError } from "../errors/index.ts";
import type { RedisConnection } from "./redis-connection.ts";

/** Deletes the lock only if this holder still has it: a lock taken over after its lease is not ours to free. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** Extends the lease only while this holder still has it. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/**
 * The lock of one import: the file's bytes and the definition. Inline runs
 * and queue jobs take the same key, so neither overlaps the other.
 */
export function importLockKey(prefix: string, fileHash: string, definitionHash: string): string {
  return `${prefix}:lock:import:${fileHash.slice(0, 32)}:${definitionHash.slice(0, 16)}`;
}

/** Another run holds the lock; `holder` says which, in words fit for one line. */
export class RunLockedError extends RecruitSyncError {
  readonly holder: string;
  constructor(what: string, holder: string) {
    super("run_locked", `${what} is already running (${holder}); wait for it to finish or stop it`, {
      retryable: true,
    });
    this.holder = holder;
  }
}

export interface RunLockOptions {
  redis: RedisConnection;
  /** The full Redis key, under the configured prefix. */
  key: string;
  /** Who holds it, as the next contender will read it: host, pid, job id. */
  holder: string;
  /** A holder that dies keeps the lock at most this long. */
  leaseMs?: number;
}

export interface RunLock {
  /** Set once the lease could not be renewed: another run may have taken over. */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

/**
 * Takes a lease in Redis so that two runs of the same thing never overlap —
 * two imports of one file with one definition, two refreshes of one export
 * stream. The lease is renewed every third of its length while the run goes
 * on; a holder that dies is taken over once its lease runs out.
 */
export async function takeRunLock(options: RunLockOptions, what: string): Promise<RunLock> {
  const leaseMs = options.leaseMs ?? 30_000;
  const id = `${options.holder}|${randomUUID()}`;
  const taken = await options.redis.set(options.key, id, "PX", leaseMs, "NX");
  if (taken !== "OK") {
    const current = (await options.redis.get(options.key)) ?? "";
    throw new RunLockedError(what, current.split("|")[0] || "another run");
  }
  const lost = new AbortController();
  const timer = setInterval(
    () => {
      options.redis
        .eval(RENEW, 1, options.key, id, leaseMs)
        .then((ok) => {
          if (Number(ok) !== 1) lost.abort(new RunLockedError(what, "a run that took over the lease"));
        })
        // A Redis hiccup: the next renewal tries again, well within the lease.
        .catch(() => {});
    },
    Math.max(1000, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  return {
    lost: lost.signal,
    async release() {
      clearInterval(timer);
      await options.redis.eval(RELEASE, 1, options.key, id).catch(() => {});
    },
  };
}

/**
 * Runs `fn` under the lock and frees it afterwards, whatever happens. When
 * `waitMs` is given, waits up to that long for the holder to finish first.
 */
export async function withRunLock<T>(
  options: RunLockOptions & { waitMs?: number; signal?: AbortSignal },
  what: string,
  fn: (lost: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + (options.waitMs ?? 0);
  let lock: RunLock;
  for (;;) {
    try {
      lock = await takeRunLock(options, what);
      break;
    } catch (err) {
      if (!(err instanceof RunLockedError) || Date.now() >= deadline) throw err;
      options.signal?.throwIfAborted();
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn(lock.lost);
  } finally {
    await lock.release();
  }
}

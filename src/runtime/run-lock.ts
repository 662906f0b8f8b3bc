import { randomUUID } from "node:crypto";
import { RecruitSyncError } from "../errors/index.ts";
import { processGone, processHost } from "./local-process.ts";
import type { RedisConnection } from "./redis-connection.ts";

/** Deletes the lock only if this holder still has it: a lock taken over after its lease is not ours to free. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** Takes the lock over from the holder read a moment ago, unless it changed since. */
const TAKE_OVER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return false
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

/** A lock's value as the next contender reads it: `holder|uuid|host|pid`. */
interface LockValue {
  holder: string;
  host?: string;
  pid?: number;
}

function lockValue(holder: string): string {
  return `${holder}|${randomUUID()}|${processHost()}|${process.pid}`;
}

/** Read from the end: a holder's words may hold "|", the uuid, host and pid do not. */
function parseLockValue(value: string): LockValue {
  const parts = value.split("|");
  if (parts.length < 4) return { holder: parts[0] || "another run" };
  const pid = Number(parts.at(-1));
  return {
    holder: parts.slice(0, -3).join("|") || "another run",
    host: parts.at(-2) ?? "",
    ...(Number.isSafeInteger(pid) ? { pid } : {}),
  };
}

/** A holder on this host (same boot, same pid namespace) whose process is gone: it will never release. */
function holderDead(value: LockValue): boolean {
  return (
    value.host === processHost() &&
    value.pid !== undefined &&
    value.pid !== process.pid &&
    processGone(value.pid)
  );
}

/**
 * Takes a lease in Redis so that two runs of the same thing never overlap —
 * two imports of one file with one definition, two refreshes of one export
 * stream. The lease is renewed every third of its length while the run goes
 * on. A holder that dies is taken over at once when it ran on this host
 * (its process is gone), else once its lease runs out.
 */
export async function takeRunLock(options: RunLockOptions, what: string): Promise<RunLock> {
  const leaseMs = options.leaseMs ?? 30_000;
  const id = lockValue(options.holder);
  for (let tries = 0; ; tries++) {
    if ((await options.redis.set(options.key, id, "PX", leaseMs, "NX")) === "OK") break;
    const current = await options.redis.get(options.key);
    // Freed between the two calls: try again.
    if (current === null && tries < 3) continue;
    const held = parseLockValue(current ?? "");
    if (current !== null && holderDead(held)) {
      if ((await options.redis.eval(TAKE_OVER, 1, options.key, current, id, leaseMs)) === "OK") break;
      // Another contender took it over first, or it changed hands: read again.
      if (tries < 3) continue;
    }
    throw new RunLockedError(what, held.holder);
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

/** One lock of a run: its key, and what it guards in the words the one line of a refused contender uses. */
export interface RunLockKey {
  key: string;
  what: string;
}

/**
 * Runs `fn` under every lock, taken in order, and frees them in reverse
 * afterwards, whatever happens. `lost` aborts once any of the leases could
 * not be renewed.
 */
export async function withRunLocks<T>(
  options: Omit<RunLockOptions, "key">,
  keys: readonly RunLockKey[],
  fn: (lost: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  const locks: RunLock[] = [];
  try {
    for (const { key, what } of keys) locks.push(await takeRunLock({ ...options, key }, what));
    return await fn(joinSignals(...locks.map((l) => l.lost)));
  } finally {
    for (const lock of locks.reverse()) await lock.release();
  }
}

/** The run's own signal joined with its locks' `lost`: any of them stops the run at its next checkpoint. */
export function joinSignals(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}

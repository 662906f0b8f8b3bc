import { RecruitSyncError } from "./recruit-sync-error.ts";

/**
 * Failures that come from outside the run — Redis at its memory limit or gone
 * for good, a full disk — turned into one line that says what to change. The
 * libraries' own messages ("OOM command not allowed…", "Reached the max retries
 * per request limit…", "ENOSPC: no space left on device, write") name neither
 * the server, the file, nor the setting.
 */

/** What the messages need to know of Redis: set when a connection is made (redis-connection.ts). */
const redisSeen: { url: string | undefined; gaveUpAfterMs: number | undefined } = {
  url: undefined,
  gaveUpAfterMs: undefined,
};

/** The configured Redis, its password already masked: messages name it. */
export function noteRedisAddress(safeUrl: string): void {
  redisSeen.url = safeUrl;
}

/** A connection stopped trying after Redis had not answered for `afterMs`. */
export function noteRedisGaveUp(afterMs: number): void {
  redisSeen.gaveUpAfterMs = afterMs;
}

/** What a rerun does with the work of the failed one. */
const RESUMES = "a rerun resumes where this one stopped";

export class RedisOutOfMemoryError extends RecruitSyncError {
  constructor(cause: unknown) {
    super(
      "redis_out_of_memory",
      `Redis${redisSeen.url ? ` at ${redisSeen.url}` : ""} refused a write: it is at its maxmemory limit. Give it more memory (maxmemory) and keep maxmemory-policy noeviction, or free keys it holds that are not recruit-sync's; ${RESUMES}`,
      { cause, retryable: true },
    );
  }
}

export class RedisGoneError extends RecruitSyncError {
  constructor(cause: unknown) {
    const after = redisSeen.gaveUpAfterMs;
    const how =
      after === undefined
        ? "stopped answering"
        : `stopped answering and did not come back within ${Math.round(after / 1000)} s (redis.giveUpAfterMs)`;
    super(
      "redis_unavailable",
      `Redis${redisSeen.url ? ` at ${redisSeen.url}` : ""} ${how}: start it again, or set REDIS_URL to one that answers; ${RESUMES}`,
      { cause, retryable: true },
    );
  }
}

/** Where a file that failed to be written was, and the setting that puts it elsewhere. */
export interface WrittenFile {
  path: string;
  /** e.g. "paths.dataDir in the configuration" or "--rejects". */
  setting: string;
}

export class DiskFullError extends RecruitSyncError {
  readonly path: string;
  constructor(file: WrittenFile, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? "ENOSPC";
    super(
      "disk_full",
      `no space left to write ${file.path} (${code}): free space on that disk, or move it with ${file.setting}; ${RESUMES}`,
      { cause, retryable: true },
    );
    this.path = file.path;
  }
}

const DISK_FULL = new Set(["ENOSPC", "EDQUOT"]);

/** Whether a write failed because the disk (or the user's quota) is full. */
export function isDiskFull(err: unknown): boolean {
  return DISK_FULL.has((err as NodeJS.ErrnoException | undefined)?.code ?? "");
}

/**
 * A write's failure as the caller should see it: a full disk becomes a
 * DiskFullError naming `file`; anything else is returned as it is.
 */
export function writeFailure(err: unknown, file: WrittenFile): unknown {
  return isDiskFull(err) && !(err instanceof DiskFullError) ? new DiskFullError(file, err) : err;
}

/** The errors an ioredis command fails with once its connection has given up on Redis. */
function isRedisGone(err: Error): boolean {
  return (
    err.name === "MaxRetriesPerRequestError" ||
    err.message === "Connection is closed." ||
    /^Reached the max retries per request limit/.test(err.message) ||
    /^Stream isn't writeable and enableOfflineQueue options is false/.test(err.message)
  );
}

function isRedisOutOfMemory(err: Error): boolean {
  if (err.message.startsWith("OOM ")) return true;
  // A MULTI whose commands Redis refused while queueing them: the reasons are in previousErrors.
  const previous = (err as { previousErrors?: unknown }).previousErrors;
  return (
    err.message.startsWith("EXECABORT") &&
    Array.isArray(previous) &&
    previous.some((p) => p instanceof Error && p.message.startsWith("OOM "))
  );
}

/**
 * The outside failure behind `err` (itself or one of its causes), as one of
 * ours; undefined when there is none. A cause that is one of these wins over
 * the error that carries it ("the ledger write failed" says less than "Redis
 * is at its maxmemory"), but for a configuration error: "Redis does not
 * answer at start" already says what to do, and exits 2.
 */
export function outsideFailure(err: unknown): RecruitSyncError | undefined {
  const seen = new Set<unknown>();
  for (let e = err; e instanceof Error && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    if (e instanceof RecruitSyncError && e.code === "config_invalid") return undefined;
    if (e instanceof RedisOutOfMemoryError || e instanceof RedisGoneError || e instanceof DiskFullError)
      return e;
    if (isRedisOutOfMemory(e)) return new RedisOutOfMemoryError(e);
    if (isRedisGone(e)) return new RedisGoneError(e);
    if (isDiskFull(e)) {
      // A write that did not say which file: Node names none for write(2), so the data folder is the lead.
      const where = (e as NodeJS.ErrnoException).path ?? "a file under paths.dataDir";
      return new DiskFullError({ path: where, setting: "paths.dataDir in the configuration" }, e);
    }
  }
  return undefined;
}

import { z } from "zod";
import type { RedisConnection } from "./redis-connection.ts";

/** As long as the import ledger keeps a file's progress: a rerun that comes that late still resumes. */
const TTL_SECONDS = 90 * 24 * 3600;

/** A way in's run id as it names files (`<job>-<runId>.*`): anything else read back is ignored. */
const RunId = z.string().regex(/^[A-Za-z0-9._-]{1,100}$/);

/**
 * The key holding the run id of the last inline import of one file's bytes
 * with one definition that did not finish. Named as the run lock is
 * (importLockKey), and only read or written under that lock: while a run
 * holds it, no other run of the file and definition can be going on.
 */
export function unfinishedRunKey(prefix: string, fileHash: string, definitionHash: string): string {
  return `${prefix}:import-run:${fileHash.slice(0, 32)}:${definitionHash.slice(0, 16)}`;
}

/**
 * The run id a run of the file takes, under its run lock: the unfinished
 * run's (killed, stopped or failed), so that its log and output files are
 * carried on rather than left beside this run's; `fresh` when there is none,
 * recorded so that this run, killed in turn, hands it on.
 */
export async function claimRunId(
  redis: RedisConnection,
  key: string,
  fresh: string,
): Promise<{ runId: string; resumed: boolean }> {
  const recorded = RunId.safeParse(await redis.get(key));
  const runId = recorded.success ? recorded.data : fresh;
  await redis.set(key, runId, "EX", TTL_SECONDS);
  return { runId, resumed: recorded.success };
}

/** The run finished: the next run of the file is a run of its own, under a new id. */
export async function releaseRunId(redis: RedisConnection, key: string): Promise<void> {
  await redis.del(key);
}

import type { Job, Queue } from "bullmq";
import { ConfigError, RecruitSyncError } from "../errors/index.ts";
import { currentEpoch } from "../runtime/fleet-identity.ts";
import type { RedisConnection } from "../runtime/index.ts";

/** How long a follower gives the worker that ran a job to enqueue it again after Redis lost it. */
export const LOST_GRACE_MS = 20_000;

async function epochOf(queue: Queue): Promise<string> {
  return currentEpoch(
    (await queue.backend.client) as unknown as RedisConnection,
    queue.opts.prefix ?? "bull",
  );
}

/** The Redis data epoch under the queue's prefix: read it before adding a job, so a follower knows the Redis it was added to. */
export async function queueEpoch(queue: Queue): Promise<string> {
  return epochOf(queue);
}

/**
 * Tells a job that someone removed from a job Redis lost with its data, for
 * whoever follows it. `since` is the epoch read before the job was added;
 * without it the epoch is read now, which misses a loss between the add and
 * this call. `missing` is asked when the job is not found.
 */
export async function lostJobWatch(queue: Queue, jobId: string, since?: string, signal?: AbortSignal) {
  let epoch = since ?? (await epochOf(queue));
  return {
    /**
     * The job again when the worker that was running it enqueued it anew
     * (job-outcome.ts does so within seconds); otherwise throws: `job_lost`
     * when Redis lost its data, a ConfigError when the job was removed.
     */
    async missing(): Promise<Job> {
      const now = await epochOf(queue);
      if (now === epoch) {
        throw new ConfigError(`job ${jobId} is not in the ${queue.name} queue (removed, or another prefix?)`);
      }
      const until = Date.now() + LOST_GRACE_MS;
      while (Date.now() < until) {
        signal?.throwIfAborted();
        await new Promise((r) => setTimeout(r, 500));
        const again = await queue.getJob(jobId);
        if (again) {
          epoch = now;
          return again;
        }
      }
      throw new RecruitSyncError(
        "job_lost",
        `job ${jobId} was lost with Redis's data (Redis restarted without persistence, or it evicted keys) and no worker was running it: enqueue it again; to keep jobs through a Redis restart, run Redis with appendonly yes and maxmemory-policy noeviction`,
      );
    },
  };
}

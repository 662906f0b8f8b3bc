import type { Logger } from "pino";
import type { FleetMembership } from "../runtime/fleet-identity.ts";

export interface FleetWatch {
  /** Beats now rather than at the next tick (Redis came back, say). */
  beatNow(): void;
  stop(): Promise<void>;
}

/**
 * Beats every `everyMs`: the worker stays in the fleet, and a Redis that lost
 * its data is noticed within one beat of coming back. Then `onLost` recovers
 * what Redis alone held (the schedules, the jobs of dropped files, the jobs
 * this worker was running). A Redis that does not answer is left to BullMQ's
 * own reconnecting: the beat tries again next tick.
 */
export function watchFleet(options: {
  membership: FleetMembership;
  everyMs: number;
  logger: Logger;
  prefix: string;
  onLost: () => Promise<void>;
}): FleetWatch {
  const { membership, logger } = options;
  let running: Promise<void> | undefined;
  let stopped = false;

  async function beat(): Promise<void> {
    let state: "same" | "lost";
    try {
      state = await membership.beat();
    } catch (err) {
      logger.debug(
        { err: err instanceof Error ? err.message : String(err) },
        "fleet beat: Redis did not answer",
      );
      return;
    }
    if (state === "same" || stopped) return;
    logger.error(
      { code: "job_lost", prefix: options.prefix },
      "Redis lost its data (restarted without persistence, flushed, or evicting keys): queued jobs, schedules and import ledgers under this prefix are gone. This worker re-creates the schedules, enqueues its running jobs and the files in its watched folders' processing/ again; jobs that were only waiting are lost. Run Redis with appendonly yes and maxmemory-policy noeviction",
    );
    try {
      await options.onLost();
    } catch (err) {
      logger.error(
        { err: err instanceof Error ? err.message : String(err) },
        "recovering after Redis lost its data failed: restart the worker to recover the rest",
      );
    }
  }

  const tick = () => {
    if (stopped || running) return;
    running = beat().finally(() => {
      running = undefined;
    });
  };
  const timer = setInterval(tick, options.everyMs);
  timer.unref();
  return {
    beatNow: tick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await membership.leave().catch(() => {});
    },
  };
}

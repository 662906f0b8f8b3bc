import { randomUUID } from "node:crypto";
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { type RuntimeConfig, readJobFiles } from "../config/index.ts";
import type { Queues } from "../queue/index.ts";
import { currentEpoch, fleetKeys } from "../runtime/fleet-identity.ts";
import { readBudget } from "../runtime/index.ts";
import { readReconciliations } from "../synclog/reconciliation-outcomes.ts";
import { type AlertKeys, alertKeys } from "./alert-keys.ts";
import { decide, safeJson } from "./alert-state.ts";
import { type DeliveryJobData, flushOutbox } from "./alerts-queue.ts";
import { observe, type RuleInputs } from "./rules.ts";
import { groupRuns, readRuns } from "./run-history.ts";

export interface EvaluatorDeps {
  config: RuntimeConfig;
  redis: Redis;
  queues: Queues;
  alertsQueue: Queue<DeliveryJobData>;
  logger: Logger;
}

/** Runs per job the rules look at: the latest real run is near the top. */
const RUNS_PER_JOB = 20;

/** `since` kept under `field` of the rules' memory while `on`, dropped when not: when a state began. */
async function remember(redis: Redis, keys: AlertKeys, field: string, on: boolean, now: number) {
  if (!on) {
    await redis.hdel(keys.memory, field);
    return null;
  }
  await redis.hsetnx(keys.memory, field, String(now));
  return Number(await redis.hget(keys.memory, field));
}

/** How long the oldest of a queue's runs has waited for a worker, and how many wait. */
async function waitingOf(queue: Queue, name: string) {
  const counts = await queue.getJobCounts("waiting", "prioritized");
  const count = (counts.waiting ?? 0) + (counts.prioritized ?? 0);
  if (count === 0) return { queue: name, count, oldestSince: null };
  const jobs = await queue.getJobs(["waiting", "prioritized"], 0, 199, true);
  let oldest: number | null = null;
  for (const job of jobs) {
    if (!job) continue;
    // A retried or delayed job waits from when it became ready, not from when it was first added.
    const since = Math.max(job.timestamp + (job.delay ?? 0), job.finishedOn ?? 0);
    oldest = oldest === null ? since : Math.min(oldest, since);
  }
  return { queue: name, count, oldestSince: oldest };
}

/** What the rules look at now. */
export async function gatherInputs(deps: EvaluatorDeps, now: number): Promise<RuleInputs> {
  const { config, redis, queues } = deps;
  const keys = alertKeys(config.redis.prefix);
  const jobs = groupRuns(await readRuns(queues, { scan: 200 }), RUNS_PER_JOB);

  const schedules: RuleInputs["schedules"] = [];
  const files = await readJobFiles(config.paths.jobsDir).catch(() => []);
  for (const f of files) {
    if (!f.ok || f.definition.kind !== "export" || !f.definition.schedule) continue;
    const firstSeenAt = await remember(redis, keys, `firstSeen|${f.name}`, true, now);
    schedules.push({
      job: f.name,
      cron: f.definition.schedule.cron,
      timezone: f.definition.schedule.timezone,
      firstSeenAt: firstSeenAt ?? now,
    });
  }

  const budget = await readBudget(config, redis).catch(() => undefined);
  const [importsHeld, exportsHeld] = await Promise.all([
    queues.imports.getRateLimitTtl(),
    queues.exports.getRateLimitTtl(),
  ]);
  const heldUntil = Math.max(importsHeld, exportsHeld, 0) > 0 ? now + Math.max(importsHeld, exportsHeld) : 0;
  const pausedUntil = Math.max(budget?.pausedUntil ?? 0, heldUntil);
  const paused = pausedUntil > now;
  const pausedSince = await remember(redis, keys, "budgetPausedSince", paused, now);

  const waiting = [await waitingOf(queues.imports, "imports"), await waitingOf(queues.exports, "exports")];
  const lost = safeJson(await redis.get(keys.dataLost)) as { at?: unknown } | undefined;
  return {
    now,
    jobs,
    schedules,
    budget: { pausedSince, pausedUntil: paused ? pausedUntil : null },
    waiting,
    dataLost: typeof lost?.at === "number" ? { at: lost.at } : null,
    reconciliations: await readReconciliations(redis, config.redis.prefix),
    prefix: config.redis.prefix,
  };
}

/**
 * One evaluation of every rule, by whichever process of the fleet takes the
 * turn (a lock held for most of a period, so one evaluation happens per
 * period however many processes try). Hands on what an earlier evaluation
 * decided and did not queue (its process was killed), decides the changes,
 * and queues them. Returns false when another process had the turn.
 */
export async function evaluateOnce(deps: EvaluatorDeps, now = Date.now()): Promise<boolean> {
  const { config, redis } = deps;
  const keys = alertKeys(config.redis.prefix);
  const turnMs = Math.max(50, Math.floor(config.alerts.evaluateEveryMs * 0.9));
  const took = await redis.set(keys.evaluating, randomUUID(), "PX", turnMs, "NX");
  if (took !== "OK") return false;
  await flushOutbox(redis, keys, deps.alertsQueue, config);
  const input = await gatherInputs(deps, now);
  let decided = 0;
  for (const observation of observe(input, config.alerts.rules)) {
    const seq = await decide(redis, keys, config.redis.prefix, observation, now);
    if (seq === 0) continue;
    decided++;
    const { rule, subject, severity, firing } = observation;
    deps.logger[firing ? "warn" : "info"](
      { rule, subject, severity, state: firing ? "firing" : "resolved", seq },
      `alert ${firing ? "firing" : "resolved"}: ${observation.title}`,
    );
  }
  if (decided > 0) await flushOutbox(redis, keys, deps.alertsQueue, config);
  return true;
}

/**
 * Notices, in this process, that Redis lost its data: the fleet epoch (a key
 * every worker keeps, docs/runtime.md) gone or changed since the last look.
 * It leaves a mark under the prefix for the `redisDataLost` rule, whichever
 * process evaluates. Every process looks at every tick, not only the one
 * whose turn it is: the one that remembers the old epoch may not be it.
 */
export function watchEpoch(redis: Redis, prefix: string) {
  let known: string | undefined;
  const keys = alertKeys(prefix);
  return async (now = Date.now()): Promise<boolean> => {
    const epoch = await redis.get(fleetKeys(prefix).epoch);
    if (known === undefined || epoch === known) {
      known = epoch ?? (await currentEpoch(redis, prefix));
      return false;
    }
    known = await currentEpoch(redis, prefix);
    await redis.set(keys.dataLost, JSON.stringify({ at: now, epoch: known }));
    return true;
  };
}

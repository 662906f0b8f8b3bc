import type { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { RuntimeConfig } from "../config/index.ts";
import { openQueues, type Queues, queueConnection } from "../queue/index.ts";
import { asRedis, connectRedis, type RedisConnection } from "../runtime/index.ts";
import { type DeliveryJobData, openAlertsQueue, startDeliveryWorker } from "./alerts-queue.ts";
import { evaluateOnce, watchEpoch } from "./evaluate.ts";

export interface StartAlertsOptions {
  config: RuntimeConfig;
  logger: Logger;
  /** Reused when given (the ops server's); else connected and closed with the alerts. */
  redis?: Redis;
  queues?: Queues;
  /** Deliver from the alerts queue in this process too (default true). */
  deliver?: boolean;
}

export interface RunningAlerts {
  /** Undefined when no channel is configured: nothing is evaluated or sent. */
  queue: Queue<DeliveryJobData> | undefined;
  worker: Worker<DeliveryJobData> | undefined;
  /** Evaluates now, if it is this process's turn (tests, and right after start). */
  evaluateNow(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The alerts of one process: every `alerts.evaluateEveryMs` it looks whether
 * Redis lost its data and, when it is its turn in the fleet, evaluates the
 * rules and queues what changed; its worker delivers from the `alerts` queue.
 * Both the workers and the ops server run this, so a schedule with no worker
 * left is still noticed by the ops server. Nothing runs without a channel.
 */
export async function startAlerts(options: StartAlertsOptions): Promise<RunningAlerts> {
  const { config, logger } = options;
  if (config.alerts.channels.length === 0) {
    return { queue: undefined, worker: undefined, evaluateNow: async () => false, close: async () => {} };
  }
  const owned: { redis?: RedisConnection; queues?: Queues } = {};
  if (!options.redis)
    owned.redis = await connectRedis(config, "alert states and the alerts queue live there");
  const redis = options.redis ?? asRedis(owned.redis as RedisConnection);
  const connection = queueConnection(config);
  if (!options.queues) owned.queues = openQueues(config, connection);
  const queues = (options.queues ?? owned.queues) as Queues;
  const alertsQueue = openAlertsQueue(config, connection);
  const worker = options.deliver === false ? undefined : startDeliveryWorker(config, connection, logger);
  const epochChanged = watchEpoch(redis, config.redis.prefix);
  const deps = { config, redis, queues, alertsQueue, logger };

  let running: Promise<boolean> | undefined;
  const tick = (): Promise<boolean> => {
    running ??= (async () => {
      try {
        if (await epochChanged()) {
          logger.error({ code: "job_lost", prefix: config.redis.prefix }, "alerts: Redis lost its data");
        }
        return await evaluateOnce(deps);
      } catch (err) {
        logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          "alerts: evaluating the rules failed; trying again at the next tick",
        );
        return false;
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  const timer = setInterval(() => void tick(), config.alerts.evaluateEveryMs);
  timer.unref();
  void tick();
  logger.info(
    { channels: config.alerts.channels.map((c) => c.name), everyMs: config.alerts.evaluateEveryMs },
    "alerts: rules evaluated and deliveries sent from this process",
  );

  let closing: Promise<void> | undefined;
  return {
    queue: alertsQueue,
    worker,
    evaluateNow: async () => {
      await running;
      return tick();
    },
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        await running;
        await worker?.close().catch(() => {});
        await alertsQueue.close().catch(() => {});
        await owned.queues?.close().catch(() => {});
        connection.disconnect();
        owned.redis?.disconnect();
      })();
      return closing;
    },
  };
}

import { type Job, Queue, UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { z } from "zod";
import type { RuntimeConfig } from "../config/index.ts";
import { AlertDeliveryError } from "../errors/index.ts";
import { workerOptions } from "../queue/index.ts";
import type { RedisConnection } from "../runtime/index.ts";
import { AlertEvent } from "./alert-event.ts";
import type { AlertKeys } from "./alert-keys.ts";
import { safeJson } from "./alert-state.ts";
import { channelTakes, sendAlert } from "./channels/send-alert.ts";

/** The queue of alert deliveries: one job per alert and channel. */
export const ALERTS_QUEUE = "alerts";

/** A delivery job's data: the alert as decided, and the channel (by name in alerts.channels) it goes to. */
export const DeliveryJobData = z.object({ channel: z.string(), event: AlertEvent }).strict();
export type DeliveryJobData = z.infer<typeof DeliveryJobData>;

/** Delivery jobs kept for the dashboard: the failed ones are what ops look at. */
const KEEP_COMPLETED = 500;
const KEEP_FAILED = 1000;

/** The alerts queue under the configured prefix, with the delivery's retries and backoff. */
export function openAlertsQueue(config: RuntimeConfig, connection: RedisConnection): Queue<DeliveryJobData> {
  const queue = new Queue<DeliveryJobData>(ALERTS_QUEUE, {
    connection,
    prefix: config.redis.prefix,
    defaultJobOptions: {
      attempts: config.alerts.delivery.attempts,
      backoff: { type: "exponential", delay: config.alerts.delivery.backoffMs },
      removeOnComplete: { count: KEEP_COMPLETED },
      removeOnFail: { count: KEEP_FAILED },
    },
  });
  queue.on("error", () => {});
  return queue;
}

/** One delivery job per alert and channel: the same change never makes two jobs for one channel. */
export function deliveryJobId(eventId: string, channel: string): string {
  return `${eventId}-${channel}`;
}

/**
 * Hands every alert decided and not yet queued to the alerts queue, one job
 * per channel that takes its severity, then clears it from the outbox. Safe
 * to run again and from several processes: a job id that exists is not
 * added twice. Returns how many alerts it handed on.
 */
export async function flushOutbox(
  redis: Redis,
  keys: AlertKeys,
  queue: Queue<DeliveryJobData>,
  config: RuntimeConfig,
): Promise<number> {
  const pending = await redis.hgetall(keys.outbox);
  let handed = 0;
  for (const [id, text] of Object.entries(pending)) {
    const parsed = AlertEvent.safeParse(safeJson(text));
    if (parsed.success) {
      const event = parsed.data;
      for (const channel of config.alerts.channels) {
        if (!channelTakes(channel, event)) continue;
        await queue.add(
          `${event.rule} ${event.state}`,
          { channel: channel.name, event },
          {
            jobId: deliveryJobId(event.id, channel.name),
          },
        );
      }
      handed++;
    }
    await redis.hdel(keys.outbox, id);
  }
  return handed;
}

/**
 * The worker that delivers: each job sends its alert to its channel. A
 * failure the receiver may get over (5xx, no answer) is tried again with
 * backoff; a refusal (4xx) or a channel no longer configured fails at once.
 * A job failed for good stays in the queue's failed jobs, on the dashboard.
 */
export function startDeliveryWorker(
  config: RuntimeConfig,
  connection: RedisConnection,
  logger: Logger,
): Worker<DeliveryJobData> {
  const worker = new Worker<DeliveryJobData>(
    ALERTS_QUEUE,
    async (job: Job<DeliveryJobData>) => {
      const data = DeliveryJobData.safeParse(job.data);
      if (!data.success) throw new UnrecoverableError("invalid delivery job data");
      const { channel: name, event } = data.data;
      const channel = config.alerts.channels.find((c) => c.name === name);
      if (!channel)
        throw new UnrecoverableError(`alert_undelivered: channel ${name} is no longer configured`);
      try {
        const delivered = await sendAlert(channel, event, config.alerts);
        logger.info(
          {
            rule: event.rule,
            channel: name,
            alertId: event.id,
            state: event.state,
            attempt: job.attemptsMade + 1,
          },
          `alert delivered: ${delivered.detail}`,
        );
        return delivered;
      } catch (err) {
        const final = !(err instanceof AlertDeliveryError && err.retryable);
        const attempts = job.opts.attempts ?? 1;
        const last = final || job.attemptsMade + 1 >= attempts;
        const message = err instanceof Error ? err.message : String(err);
        logger[last ? "error" : "warn"](
          {
            code: "alert_undelivered",
            channel: name,
            alertId: event.id,
            attempt: job.attemptsMade + 1,
            attempts,
          },
          last
            ? `alert not delivered, for good: ${message} (kept in the alerts queue's failed jobs)`
            : `alert not delivered: ${message}; trying again`,
        );
        if (final) throw new UnrecoverableError(`alert_undelivered: ${message}`);
        throw new Error(`alert_undelivered: ${message}`);
      }
    },
    { ...workerOptions(config, connection), concurrency: 4 },
  );
  worker.on("error", (err) => logger.warn({ err: err.message }, "alerts worker error"));
  return worker;
}

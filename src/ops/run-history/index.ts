/**
 * The run history page of the console (`/runs`) and the ops API behind it:
 * `GET /api/run-history` (recent runs per job, alert states, sparkline
 * series) and `GET /api/alerts` (alert states and deliveries that failed for
 * good). See docs/console.md and docs/ops.md.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Queue } from "bullmq";
import type { FastifyInstance } from "fastify";
import type { Redis } from "ioredis";
import { z } from "zod";
import { alertKeys, type DeliveryJobData, readAlertStates, readRunHistory } from "../../alerts/index.ts";
import type { RuntimeConfig } from "../../config/index.ts";
import type { Queues } from "../../queue/index.ts";
import { PAGE_HEADERS } from "../console/index.ts";
import { parseQuery } from "../ops-http-error.ts";
import { requireRedis } from "../require-redis.ts";

export interface RunHistoryRoutesOptions {
  config: RuntimeConfig;
  queues: Queues;
  redis: Redis;
  /** The alerts queue, when alerts run in this process (a channel is configured). */
  alertsQueue: Queue<DeliveryJobData> | undefined;
}

/** Which runs GET /api/run-history shows. */
export const RunHistoryQuery = z
  .object({
    job: z
      .string()
      .regex(/^[A-Za-z0-9._ -]{1,200}$/)
      .optional(),
    perJob: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict();

export async function registerRunHistory(
  app: FastifyInstance,
  options: RunHistoryRoutesOptions,
): Promise<void> {
  const { config, queues, redis } = options;
  const needRedis = requireRedis(redis);
  const [page, script] = await Promise.all(
    ["run-history.html", "run-history.js"].map((f) => readFile(path.join(import.meta.dirname, f), "utf8")),
  );
  app.get("/runs", (_request, reply) =>
    reply.headers(PAGE_HEADERS).type("text/html; charset=utf-8").send(page),
  );
  app.get("/run-history.js", (_request, reply) =>
    reply.headers(PAGE_HEADERS).type("text/javascript; charset=utf-8").send(script),
  );

  app.get("/api/run-history", { preHandler: needRedis }, async (request) => {
    const { job, perJob } = parseQuery(RunHistoryQuery, request.query);
    return readRunHistory(queues, redis, config.redis.prefix, { ...(job ? { job } : {}), perJob });
  });

  app.get("/api/alerts", { preHandler: needRedis }, async () => {
    const states = await readAlertStates(redis, alertKeys(config.redis.prefix));
    const failed = options.alertsQueue ? await options.alertsQueue.getJobs(["failed"], 0, 99, false) : [];
    return {
      channels: config.alerts.channels.map((c) => ({ name: c.name, kind: c.kind })),
      states: states.map((s) => ({ ...s, since: new Date(s.since).toISOString() })),
      /** Deliveries that failed for good: kept in the alerts queue (also on the dashboard, /ui). */
      undelivered: failed.flatMap((job) =>
        job
          ? [
              {
                jobId: job.id,
                channel: job.data.channel,
                alertId: job.data.event.id,
                rule: job.data.event.rule,
                state: job.data.event.state,
                attemptsMade: job.attemptsMade,
                failedReason: job.failedReason,
                finishedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
              },
            ]
          : [],
      ),
    };
  });
}

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type Job, UnrecoverableError, Worker } from "bullmq";
import type { Logger } from "pino";
import {
  alertKeys,
  type DeliveryJobData,
  evaluateOnce,
  openAlertsQueue,
  startDeliveryWorker,
} from "../../src/alerts/index.ts";
import { RuntimeConfig } from "../../src/config/index.ts";
import { createLogger } from "../../src/logger/index.ts";
import { openQueues, type Queues, queueConnection } from "../../src/queue/index.ts";
import type { RedisConnection } from "../../src/runtime/index.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import type { SmtpReceiver, WebhookReceiver } from "./receivers.ts";

/** Personal data the runs carry (a file name, a failure's message, a report): no alert may repeat it. */
export const PERSON = { email: "ada.lovelace@example.org", phone: "+44 20 7946 0958" };

export const WEBHOOK_SECRET = "whsec-test-0123456789abcdef";

export interface AlertsProjectOptions {
  webhook?: WebhookReceiver;
  /** A second webhook, as a Slack incoming webhook. */
  slack?: WebhookReceiver;
  smtp?: SmtpReceiver;
  /** alerts.rules overrides. */
  rules?: Record<string, unknown>;
  delivery?: Record<string, unknown>;
  evaluateEveryMs?: number;
  /** jobs/*.yaml files: name → YAML text. */
  jobs?: Record<string, string>;
  baseUrl?: string;
  token?: string;
}

export interface AlertsProject {
  config: RuntimeConfig;
  redis: TestRedis;
  dir: string;
  logger: Logger;
  logText(): string;
  cleanup(): Promise<void>;
}

/** A configuration of its own: a `test-<uuid>` prefix, a jobs folder, channels to the test's receivers. */
export async function alertsProject(options: AlertsProjectOptions = {}): Promise<AlertsProject> {
  const redis = await withTestRedis();
  const dir = await mkdtemp(path.join(os.tmpdir(), "recruit-sync-alerts-"));
  const jobsDir = path.join(dir, "jobs");
  await import("node:fs/promises").then((fs) => fs.mkdir(jobsDir));
  for (const [name, text] of Object.entries(options.jobs ?? {})) {
    await writeFile(path.join(jobsDir, `${name}.yaml`), text);
  }
  const channels: unknown[] = [];
  if (options.webhook) channels.push({ kind: "webhook", name: "ops-hook", url: options.webhook.url });
  if (options.slack) channels.push({ kind: "slack", name: "slack", url: options.slack.url });
  if (options.smtp) {
    channels.push({
      kind: "email",
      name: "email",
      host: "127.0.0.1",
      port: options.smtp.port,
      user: "alerts",
      from: "recruit-sync@ops.invalid",
      to: ["on-call@ops.invalid"],
    });
  }
  const config = RuntimeConfig.parse({
    service: {
      baseUrl: options.baseUrl ?? "http://127.0.0.1:9/api/public/v1",
      ...(options.token ? { token: options.token } : {}),
    },
    redis: { url: REDIS_URL, prefix: redis.prefix },
    warehouse: { url: `duckdb:${path.join(dir, "warehouse.duckdb")}` },
    paths: { jobsDir, dataDir: path.join(dir, "data") },
    queue: { lockMs: 2000, attempts: 1 },
    alerts: {
      channels,
      rules: options.rules ?? {},
      delivery: { attempts: 5, backoffMs: 20, timeoutMs: 2000, ...options.delivery },
      evaluateEveryMs: options.evaluateEveryMs ?? 60_000,
      secrets: { webhook: WEBHOOK_SECRET, smtpPassword: "smtp-secret" },
    },
  });
  const lines: string[] = [];
  const logger = createLogger({
    level: "info",
    name: "alerts-test",
    destination: { write: (line: string) => void lines.push(line) },
  });
  return {
    config,
    redis,
    dir,
    logger,
    logText: () => lines.join(""),
    async cleanup() {
      await redis.cleanup();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The queues, the alerts queue with its delivery worker, and a stand-in
 * worker that finishes import jobs as their name says: `fail` fails for
 * good with a code, anything else completes with the counts in its data.
 */
export function alertsHarness(project: AlertsProject) {
  const connection: RedisConnection = queueConnection(project.config);
  const queues: Queues = openQueues(project.config, connection);
  const alertsQueue = openAlertsQueue(project.config, connection);
  const delivery = startDeliveryWorker(project.config, connection, project.logger);
  const deps = {
    config: project.config,
    redis: project.redis.redis,
    queues,
    alertsQueue,
    logger: project.logger,
  };
  let standIn: Worker | undefined;
  return {
    queues,
    alertsQueue,
    delivery,
    /** One evaluation now (taking the turn from any earlier one), as of `now`. */
    async evaluate(now = Date.now()) {
      await project.redis.redis.del(alertKeys(project.config.redis.prefix).evaluating);
      return evaluateOnce(deps, now);
    },
    /** Runs one import job of `job` to the end with the stand-in worker: failed (with `code`) or completed with counts. */
    async finishImport(
      job: string,
      outcome: {
        fail?: string;
        rowsRead?: number;
        rejected?: number;
        sleepMs?: number;
        budgetWaitMs?: number;
      },
    ) {
      standIn ??= new Worker(
        "imports",
        async (j: Job) => {
          const o = j.data.outcome as {
            fail?: string;
            rowsRead?: number;
            rejected?: number;
            sleepMs?: number;
            budgetWaitMs?: number;
          };
          if (o.sleepMs) await new Promise((r) => setTimeout(r, o.sleepMs));
          if (o.budgetWaitMs) await j.updateProgress({ kind: "pending", budgetWaitMs: o.budgetWaitMs });
          if (o.fail) {
            await j.updateProgress({
              kind: "pending",
              budgetWaitMs: 0,
              failure: { code: o.fail, message: `refused ${PERSON.email}`, retryable: false, final: true },
            });
            throw new UnrecoverableError(`${o.fail}: refused ${PERSON.email} ${PERSON.phone}`);
          }
          return {
            kind: "import",
            status: "completed",
            rowsRead: o.rowsRead ?? 10,
            rejected: o.rejected ?? 0,
            warnings: [`row 2: ${PERSON.email} ${PERSON.phone}`],
          };
        },
        { connection, prefix: project.config.redis.prefix },
      );
      const added = await queues.imports.add(job, {
        kind: "import",
        job,
        file: `/data/${PERSON.email}.csv`,
        origin: "cli",
        outcome,
      } as never);
      for (;;) {
        const state = await added.getState();
        if (state === "completed" || state === "failed") return state;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      await standIn?.close();
      await delivery.close();
      await alertsQueue.close();
      await queues.close();
      connection.disconnect();
    },
  };
}

export type AlertsHarness = ReturnType<typeof alertsHarness>;
export type { DeliveryJobData };

import { QueueEvents } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { RuntimeConfig } from "../config/index.ts";
import { RunReport } from "../exports/index.ts";
import { ImportReport, OptOutReport } from "../imports/index.ts";
import {
  type FleetCounters,
  QUEUE_NAMES,
  type Queues,
  queueConnection,
  readFleetCounters,
} from "../queue/index.ts";
import { readInvalidDefinitions } from "../queue/schedulers.ts";

/** The job states /metrics counts per queue (BullMQ 6 has no `paused` state). */
export const QUEUE_STATES = [
  "waiting",
  "prioritized",
  "active",
  "delayed",
  "waiting-children",
  "completed",
  "failed",
] as const;

export interface OpsMetrics {
  registry: Registry;
  /** Resolves once both queues' event streams are being read: work finished after this is counted. */
  ready: Promise<void>;
  close(): Promise<void>;
}

export interface OpsMetricsOptions {
  config: RuntimeConfig;
  queues: Queues;
  redis: Redis;
  logger: Logger;
}

/**
 * The Prometheus metrics of the ops server (docs/ops.md, "Metrics", says what
 * each one counts). Three sources, none of which needs a worker in this
 * process:
 * - the fleet's counters in Redis (answers of the service, budget waits),
 *   written by every worker's client and read at scrape time;
 * - the queues' event streams: each finished job's report (rows) and times
 *   (durations), counted from when this server started;
 * - the queues themselves at scrape time (jobs by state).
 */
export function createOpsMetrics(options: OpsMetricsOptions): OpsMetrics {
  const { config, queues, redis, logger } = options;
  const registry = new Registry();
  const prefix = config.redis.prefix;

  // Mirrors of counters Redis holds for the whole fleet: reset, then set to Redis's value at each scrape.
  const fleetCounter = <L extends string>(
    counter: { name: string; help: string; labelNames?: readonly L[] },
    count: (mirror: Counter<L>, fleet: FleetCounters) => void,
  ) =>
    new Counter<L>({
      ...counter,
      registers: [registry],
      async collect() {
        const fleet = await readFleetCounters(redis, prefix);
        this.reset();
        count(this, fleet);
      },
    });
  fleetCounter(
    {
      name: "recruit_sync_requests_total",
      help: "Answers of the service to every worker on this Redis, by operation and HTTP status (each attempt of a retried call counts)",
      labelNames: ["operation", "status"] as const,
    },
    (mirror, fleet) => {
      for (const r of fleet.responses)
        mirror.inc({ operation: r.operationId, status: String(r.status) }, r.count);
    },
  );
  fleetCounter(
    {
      name: "recruit_sync_rate_limited_total",
      help: "429 answers of the service to every worker on this Redis, by operation",
      labelNames: ["operation"] as const,
    },
    (mirror, fleet) => {
      for (const r of fleet.responses)
        if (r.status === 429) mirror.inc({ operation: r.operationId }, r.count);
    },
  );
  fleetCounter(
    {
      name: "recruit_sync_budget_wait_seconds_total",
      help: "Seconds jobs waited on the shared rate budget before sending a request, summed over every worker on this Redis",
    },
    (mirror, fleet) => mirror.inc(fleet.budgetWaitMs / 1000),
  );
  fleetCounter(
    {
      name: "recruit_sync_budget_waits_total",
      help: "Requests that had to wait on the shared rate budget, over every worker on this Redis",
    },
    (mirror, fleet) => mirror.inc(fleet.budgetWaits),
  );

  new Gauge({
    name: "recruit_sync_job_definitions_invalid",
    help: "Job definitions of jobs/ the workers' last reconcile found invalid (a scheduled one keeps its last valid definition)",
    registers: [registry],
    async collect() {
      this.set(Object.keys(await readInvalidDefinitions(redis, prefix)).length);
    },
  });

  new Gauge({
    name: "recruit_sync_queue_jobs",
    help: "Jobs in each queue by state, read from Redis at scrape time",
    labelNames: ["queue", "state"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const queue of [queues.imports, queues.exports]) {
        const counts = await queue.getJobCounts(...QUEUE_STATES);
        for (const state of QUEUE_STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
      }
    },
  });

  // Counted from the reports of finished jobs, by one label.
  const reportCounter = <L extends string>(name: string, help: string, label: L) =>
    new Counter({ name, help, labelNames: [label] as const, registers: [registry] });
  const imported = reportCounter(
    "recruit_sync_rows_imported_total",
    "Rows sent to the service by completed import jobs (opt-out jobs: people updated), by job definition",
    "job",
  );
  const rejected = reportCounter(
    "recruit_sync_rows_rejected_total",
    "Rows completed import jobs put in their rejects file, by job definition",
    "job",
  );
  const countMismatches = reportCounter(
    "recruit_sync_import_count_mismatches_total",
    "Import requests of completed import jobs whose answer counted other than the people sent (their people are marked unverified), by job definition",
    "job",
  );
  const missingPeople = reportCounter(
    "recruit_sync_people_missing_total",
    "People the service accepted that a participants export then did not find (sync_log `missing`), by study",
    "study",
  );
  const exported = reportCounter(
    "recruit_sync_rows_exported_total",
    "Rows completed export jobs wrote to the warehouse, by table",
    "table",
  );
  const durations = new Histogram({
    name: "recruit_sync_job_duration_seconds",
    help: "Time from a worker taking a job to the job finishing (completed, or failed for this attempt), by queue",
    labelNames: ["queue", "outcome"] as const,
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600],
    registers: [registry],
  });
  // Absolute zero for every label we know, so a rate() has a starting point before the first job.
  for (const queue of Object.values(QUEUE_NAMES))
    for (const outcome of ["completed", "failed"]) durations.zero({ queue, outcome });

  function countReport(queue: string, value: unknown): void {
    if (queue === QUEUE_NAMES.exports) {
      const report = RunReport.safeParse(value);
      if (!report.success) return;
      for (const [table, r] of Object.entries(report.data.resources)) if (r) exported.inc({ table }, r.rows);
      for (const c of report.data.reconciliation ?? []) missingPeople.inc({ study: c.studyId }, c.missing);
      return;
    }
    // A dry run sends nothing: its rows are neither imported nor rejected for real.
    const report = ImportReport.safeParse(value);
    if (report.success && !report.data.dryRun) {
      imported.inc({ job: report.data.job }, report.data.imported);
      rejected.inc({ job: report.data.job }, report.data.rejected);
      // A skipped run repeats the counts of the run it skipped: its mismatches were counted then.
      if (report.data.status === "completed")
        countMismatches.inc({ job: report.data.job }, report.data.countMismatches.length);
      return;
    }
    const optOut = OptOutReport.safeParse(value);
    if (optOut.success && !optOut.data.dryRun) {
      imported.inc({ job: optOut.data.job }, optOut.data.updated);
      rejected.inc({ job: optOut.data.job }, optOut.data.rejected);
    }
  }

  async function observeDuration(queueName: string, jobId: string, outcome: string): Promise<void> {
    const queue = queueName === QUEUE_NAMES.imports ? queues.imports : queues.exports;
    const job = await queue.getJob(jobId);
    if (job?.processedOn && job.finishedOn && job.finishedOn >= job.processedOn) {
      durations.observe({ queue: queueName, outcome }, (job.finishedOn - job.processedOn) / 1000);
    }
  }

  // QueueEvents blocks on its connection (XREAD): each gets its own. Each starts at the stream's
  // last event as it is now, so a job finishing while the connection comes up is still counted.
  const listeners: { events: QueueEvents; connection: ReturnType<typeof queueConnection> }[] = [];
  const ready = (async () => {
    for (const name of Object.values(QUEUE_NAMES)) {
      const last = await redis.xrevrange(`${prefix}:${name}:events`, "+", "-", "COUNT", 1);
      const connection = queueConnection(config);
      const events = new QueueEvents(name, { connection, prefix, lastEventId: last[0]?.[0] ?? "0-0" });
      listeners.push({ events, connection });
      events.on("error", (err) =>
        logger.debug({ queue: name, err: err.message }, "queue events: Redis error"),
      );
      events.on("completed", ({ jobId, returnvalue }) => {
        countReport(name, returnvalue);
        observeDuration(name, jobId, "completed").catch(() => {});
      });
      events.on("failed", ({ jobId }) => {
        observeDuration(name, jobId, "failed").catch(() => {});
      });
      await events.waitUntilReady();
    }
  })();

  return {
    registry,
    ready,
    async close() {
      await ready.catch(() => {});
      await Promise.all(listeners.map((l) => l.events.close().catch(() => {})));
      for (const l of listeners) l.connection.disconnect();
    },
  };
}

import { z } from "zod";
import { RESET_UNITS } from "../api/decisions.ts";
import { WarehouseUrl } from "../sinks/warehouse-url.ts";
import { AlertsConfig } from "./alerts-config.ts";

/**
 * Redis Cluster hashes only the part of a key between the first "{" and the
 * next "}" when that part is not empty: a prefix with such a tag puts every
 * key under it in one slot.
 */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf("{");
  if (open < 0) return false;
  const close = prefix.indexOf("}", open + 1);
  return close > open + 1;
}

/** How X-RateLimit-Reset is read: the contract's units (src/api). */
export const RESET_UNIT_VALUES = RESET_UNITS;

/** The validated runtime configuration: config/*.yaml merged with the environment. */
export const RuntimeConfig = z
  .object({
    service: z
      .object({
        baseUrl: z.url({ protocol: /^https?$/ }),
        token: z.string().min(1).optional(),
        timeoutMs: z.number().int().positive().default(30_000),
        resetUnit: z.enum(RESET_UNIT_VALUES).default("auto"),
        retry: z
          .object({
            maxAttempts: z.number().int().min(1).default(5),
            baseDelayMs: z.number().int().min(0).default(250),
            maxDelayMs: z.number().int().min(0).default(30_000),
            maxRetryAfterMs: z.number().int().min(0).default(120_000),
          })
          .strict()
          .prefault({}),
      })
      .strict(),
    redis: z
      .object({
        /** redis://, rediss://, or redis+cluster://host:port,host:port (rediss+cluster:// for TLS). */
        url: z
          .string()
          .regex(
            /^rediss?(\+cluster)?:\/\//,
            "must be a redis://, rediss:// or redis+cluster://host:port,host:port URL",
          ),
        prefix: z.string().min(1),
        /**
         * Once connected, how long Redis may not answer before a command gives up and the run
         * (or the worker) stops with one line; reconnecting every 0.2–2 s meanwhile.
         */
        giveUpAfterMs: z.number().int().min(1000).max(3_600_000).default(60_000),
      })
      .strict()
      .refine((r) => !/^rediss?\+cluster:/.test(r.url) || hasHashTag(r.prefix), {
        path: ["prefix"],
        message:
          'on Redis Cluster the prefix needs a hash tag, e.g. "{recruit-sync}", so that every key a queue script touches is in one slot',
      }),
    warehouse: z
      .object({
        url: WarehouseUrl,
      })
      .strict(),
    paths: z.object({ jobsDir: z.string().min(1), dataDir: z.string().min(1) }).strict(),
    /** The queue runtime: `recruit-sync worker` and the jobs it runs. */
    queue: z
      .object({
        /** Jobs one worker process runs at once, per queue. */
        concurrency: z
          .object({
            imports: z.number().int().min(1).default(1),
            exports: z.number().int().min(1).default(1),
          })
          .strict()
          .prefault({}),
        /** Attempts of a job whose failures are retryable; backoff doubles from backoffMs. */
        attempts: z.number().int().min(1).default(5),
        backoffMs: z.number().int().min(0).default(10_000),
        /** After SIGTERM/SIGINT, how long running jobs get to checkpoint before the process exits anyway. */
        shutdownDeadlineMs: z.number().int().min(0).default(30_000),
        /** A job that would wait longer than this for the rate budget is moved to delayed until the reset. */
        budgetWaitBoundMs: z.number().int().min(0).default(30_000),
        /**
         * How long a worker's hold on a job lasts without renewal: a killed
         * worker's job is taken up by another after about this long.
         */
        lockMs: z.number().int().min(1000).default(30_000),
        /** How often a worker says it is alive and checks that Redis kept its data (the fleet epoch). */
        heartbeatMs: z.number().int().min(100).default(5000),
        /** How often a worker reconciles the export schedules with jobs/ again (besides at start). */
        reconcileMs: z.number().int().min(1000).default(60_000),
        /** Finished jobs kept for the dashboard and the ops API. */
        keepCompleted: z.number().int().min(0).default(500),
        keepFailed: z.number().int().min(0).default(1000),
      })
      .strict()
      .prefault({}),
    imports: z
      .object({
        /**
         * Import requests one run keeps in flight, each through the rate
         * governor: the client builds the next batch while the service takes
         * the last. The ledger records each batch when its answer comes, so a
         * crash resends at most this many.
         */
        concurrency: z.number().int().min(1).max(16).default(2),
        /**
         * Import requests one run keeps in flight while a rate quota binds
         * (the file needs more requests than a window allows), when more than
         * `concurrency`: requests are then the scarce thing, and the rate
         * governor keeps every one of them within the quota. A crash resends
         * at most the requests in flight (src/imports/batch-sizing.ts).
         */
        concurrencyUnderQuota: z.number().int().min(1).max(32).default(8),
        /**
         * The most people one import request carries, for a service whose
         * limit is lower than the contract's 1,000. Under a binding rate
         * quota requests carry this many; otherwise the job's batchSize, if
         * smaller (src/imports/batch-sizing.ts).
         */
        maxBatchSize: z.number().int().min(1).max(1000).optional(),
        /**
         * Folders whose files a queued import may read, besides the console's
         * uploads and the watched folders: a job added by hand, the ops API
         * or a job saved in the console names a file under one of these, or
         * is refused (src/runtime/import-file-access.ts). Relative to the project.
         */
        roots: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .prefault({}),
    exports: z
      .object({
        /**
         * Streams one export run pages at once (studies, property groups,
         * resources: each its own cursor), all through the same rate
         * governor; each keeps its own checkpoints. Why 4: docs/spec-decisions.md.
         */
        streamConcurrency: z.number().int().min(1).max(16).default(4),
        /**
         * How long a queued export waits for a DuckDB warehouse file another
         * program has open (an analyst's session), trying every 5 s and saying
         * so in its progress, before it fails. 0 fails at the first try.
         */
        lockWaitMs: z.number().int().min(0).default(600_000),
      })
      .strict()
      .prefault({}),
    /** The run's log in the warehouse: sync_runs for every run, sync_log per person (docs/exports.md). */
    syncLog: z
      .object({
        /**
         * Write sync_log and the import rows of sync_runs. Off by default for now: on a 300k-row import the log
         * still costs 14–26% of the run's time on a 2-core machine (docs/exports.md), above the goal of 15%
         * (docs/spec-decisions.md).
         */
        enabled: z.boolean().default(false),
        /** sync_log rows older than this are deleted by the worker's daily purge. */
        retentionDays: z.number().int().min(1).default(30),
        /** How long an import waits for a DuckDB warehouse another process has open before it gives up its log. */
        lockWaitMs: z.number().int().min(0).default(60_000),
        /** Send the people a participants export finds missing again at once, as `reconcile --resend` does. */
        resendMissing: z.boolean().default(false),
        /**
         * People per part of a run's log: each part is loaded into the warehouse while the import goes on, so a
         * long import's people show in sync_log as it runs; the last part goes in with the run's sync_runs row.
         * One DuckDB row group: a part that fills row groups whole is written once, where one of 50,000 lines
         * had the group it half filled written again by the next (docs/engineering/performance-log.md).
         */
        partLines: z.number().int().min(1).default(122_880),
      })
      .strict()
      .prefault({}),
    /** Folders whose CSV files are imported with a job definition as they arrive. */
    watch: z
      .array(
        z
          .object({
            folder: z.string().min(1),
            /** The import job definition (jobs/<job>.yaml) files in this folder are imported with. */
            job: z.string().min(1),
            /** A file is taken once its size has not changed for this long. */
            stableMs: z.number().int().min(0).default(2000),
          })
          .strict(),
      )
      .default([]),
    /** `recruit-sync ops` (and `worker --ops`): the dashboard, the ops API, health and metrics. */
    ops: z
      .object({
        /** Loopback by default: listening wider is a decision (env RECRUIT_SYNC_OPS_HOST). */
        host: z.string().min(1).default("127.0.0.1"),
        /** 0 picks a free port (env RECRUIT_SYNC_OPS_PORT). */
        port: z.number().int().min(0).max(65_535).default(4020),
        /** Basic auth on every route but /healthz. Off only when a file says `auth: false`. */
        auth: z.boolean().default(true),
        user: z.string().min(1).default("ops"),
        /** From RECRUIT_SYNC_OPS_PASSWORD only; a file holding it is refused. */
        password: z.string().min(1).optional(),
        /**
         * A second port serving only /healthz, /readyz and /metrics, without
         * auth: Kubernetes probes and Prometheus send no password. None when
         * unset; 0 picks a free port (env RECRUIT_SYNC_OPS_PROBE_PORT).
         */
        probePort: z.number().int().min(0).max(65_535).optional(),
        /** Where the probe port listens; default ops.host (env RECRUIT_SYNC_OPS_PROBE_HOST). */
        probeHost: z.string().min(1).optional(),
        /** Files uploaded to the console (`<dataDir>/uploads/`): they hold people's rows. */
        uploads: z
          .object({
            /** A larger upload is refused with 413 while it streams in. */
            maxBytes: z
              .number()
              .int()
              .min(1)
              .default(200 * 1024 * 1024),
            /** Uploads older than this are removed when the ops server starts, and daily. */
            keepDays: z.number().min(0).default(7),
            /**
             * Bytes all uploads kept may take together; an upload that would
             * pass it is refused with 507 while it streams in, and nothing of it is kept.
             */
            quotaBytes: z
              .number()
              .int()
              .min(1)
              .default(2 * 1024 * 1024 * 1024),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .refine((o) => !o.probePort || o.probePort !== o.port, {
        path: ["probePort"],
        message:
          "must differ from ops.port: the probe port serves without the password, the ops port with it",
      })
      .prefault({}),
    /** Alert rules and the channels they go to (docs/ops.md, "Alerts"). */
    alerts: AlertsConfig,
    log: z
      .object({
        level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
      })
      .strict()
      .prefault({}),
  })
  .strict();
export type RuntimeConfig = z.infer<typeof RuntimeConfig>;

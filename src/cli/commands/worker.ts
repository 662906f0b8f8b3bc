import type { Command } from "commander";
import type { Logger } from "pino";
import { UsageError } from "../../errors/index.ts";
import { stopSignal } from "../stop-signal.ts";
import { parsePort } from "./port-flag.ts";

/**
 * `recruit-sync worker`: the queue runtime of one process — workers on the
 * imports and exports queues, schedules from jobs/, the watched folders —
 * until SIGTERM or SIGINT, after which running jobs checkpoint and go back to
 * the queue and the process exits 0.
 */
interface WorkerFlags {
  schedules: boolean;
  watch: boolean;
  ops?: boolean;
  opsPort?: string;
  opsHost?: string;
  probePort?: string;
}

export function registerWorkerCommand(program: Command): void {
  program
    .command("worker")
    .description("run the import and export workers, the schedules of jobs/ and the watched folders")
    .option("--no-schedules", "do not reconcile the job schedulers with jobs/ (another worker does)")
    .option("--no-watch", "do not watch the configured folders")
    .option("--ops", "also serve the dashboard, ops API and metrics (as `recruit-sync ops`) in this process")
    .option(
      "--ops-port <port>",
      "with --ops: the ops server's port (default ops.port, 4020; 0 picks a free one)",
    )
    .option("--ops-host <host>", "with --ops: the ops server's address (default ops.host, 127.0.0.1)")
    .option(
      "--probe-port <port>",
      "with --ops: also serve /healthz, /readyz and /metrics alone, without auth, on this port (default ops.probePort)",
    )
    .addHelpText(
      "after",
      `
Examples:
  recruit-sync worker                       # one process; run as many as you like on one Redis
  RECRUIT_SYNC_API_TOKEN=… REDIS_URL=redis://redis:6379 recruit-sync worker --config /etc/recruit-sync
  recruit-sync worker --no-schedules --no-watch   # extra capacity only
  RECRUIT_SYNC_OPS_PASSWORD=… recruit-sync worker --ops   # one process, dashboard on ops.port
  RECRUIT_SYNC_OPS_PASSWORD=… recruit-sync worker --ops --ops-port 8080 --ops-host 0.0.0.0
  RECRUIT_SYNC_OPS_PASSWORD=… recruit-sync worker --ops --probe-port 4021   # probes without the password`,
    )
    .action(runWorker);
}

/** Runs the worker until a signal stops it, or until Redis is given up: that error is thrown for main to print. */
async function runWorker(flags: WorkerFlags): Promise<void> {
  const { probePort, opsPort } = opsFlags(flags);
  // Configuration, logging, BullMQ and the pipelines load when the command runs, not when the CLI starts.
  const { loadConfig } = await import("../../config/index.ts");
  const { createLogger } = await import("../../logger/index.ts");
  const config = loadConfig();
  // A missing ops password is said before the worker connects to Redis or takes a job.
  const opsModule = flags.ops ? await import("../../ops/index.ts") : undefined;
  opsModule?.opsCredentials(config);
  const logger = createLogger({ level: config.log.level, name: "worker", format: "json" });
  // Listened for before anything starts: a SIGTERM while the alerts or the ops server still start
  // would otherwise take Node's default action and end the process without the stop.
  const asked = stopSignal();
  const { startWorker } = await import("../../queue/index.ts");
  const running = await startWorker({
    config,
    logger,
    schedules: flags.schedules,
    watch: flags.watch,
  }).catch((err: unknown) => {
    asked.release();
    throw err;
  });
  // The alert rules and deliveries run in every worker (with --ops, the ops server runs them).
  const { startAlerts } = await import("../../alerts/index.ts");
  const alerts = flags.ops ? undefined : await startAlerts({ config, logger, queues: running.queues });
  const ops = opsModule
    ? await opsModule
        .startOpsServer({
          config,
          logger,
          queues: running.queues,
          ...(opsPort !== undefined ? { port: opsPort } : {}),
          ...(flags.opsHost !== undefined ? { host: flags.opsHost } : {}),
          ...(probePort !== undefined ? { probePort } : {}),
        })
        .catch(async (err: unknown) => {
          asked.release();
          await running.stop();
          throw err;
        })
    : undefined;
  const gone = await untilStopped(asked, logger, running, { ops, alerts });
  if (gone) {
    // The stop may still be closing (its wait for Redis is bounded, not over): what it would log
    // now would land after the line main prints, which must be the process's last.
    logger.level = "silent";
    // BullMQ's own blocking connections go on reconnecting to the Redis that is gone and would keep
    // the process alive: once main has printed the line, the process ends whatever still waits.
    setTimeout(() => process.exit(process.exitCode ?? 1), 2000).unref();
    throw gone;
  }
}

/** The ops server's flags, refused without --ops. */
function opsFlags(flags: WorkerFlags): { probePort: number | undefined; opsPort: number | undefined } {
  const probePort = parsePort("--probe-port", flags.probePort);
  const opsPort = parsePort("--ops-port", flags.opsPort);
  const given = [
    probePort !== undefined && "--probe-port",
    opsPort !== undefined && "--ops-port",
    flags.opsHost !== undefined && "--ops-host",
  ].filter(Boolean);
  if (given.length && !flags.ops) {
    throw new UsageError(
      `${given.join(", ")} belong${given.length === 1 ? "s" : ""} to the ops server: give --ops too`,
    );
  }
  return { probePort, opsPort };
}

/**
 * Waits for the first signal, then stops the worker and what runs beside it
 * (the ops server, the alerts); or for Redis to be given up, which returns
 * its error: the worker has stopped itself then, and only the ops server is
 * closed (the alerts' close would ask the Redis that is gone).
 */
async function untilStopped(
  asked: { signal: Promise<NodeJS.Signals>; release(): void },
  logger: Logger,
  running: { stop(): Promise<unknown>; gone: Promise<Error> },
  beside: { ops: { close(): Promise<void> } | undefined; alerts: { close(): Promise<void> } | undefined },
): Promise<Error | undefined> {
  return Promise.race([
    asked.signal.then(async (signal) => {
      logger.info({ signal }, "signal received");
      await Promise.all([beside.ops?.close(), beside.alerts?.close(), running.stop()]);
      return undefined;
    }),
    // Redis silent for redis.giveUpAfterMs: the worker has stopped; the process ends with that one line.
    running.gone.then(async (error) => {
      asked.release();
      await beside.ops?.close().catch(() => {});
      return error;
    }),
  ]);
}

import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { startAlerts } from "../alerts/index.ts";
import type { RuntimeConfig } from "../config/index.ts";
import { ConfigError } from "../errors/index.ts";
import { openQueues, type Queues, queueConnection } from "../queue/index.ts";
import { asRedis, connectRedis, type RedisConnection } from "../runtime/index.ts";
import { registerBasicAuth } from "./basic-auth.ts";
import { registerConsole } from "./console/index.ts";
import { registerCrossSiteGuard } from "./cross-site-guard.ts";
import { DASHBOARD_PATH, registerDashboard } from "./dashboard.ts";
import { installErrorHandler } from "./error-handler.ts";
import { registerForgetRoute } from "./forget-route.ts";
import { createOpsMetrics, type OpsMetrics } from "./metrics.ts";
import { parseQuery } from "./ops-http-error.ts";
import { PROBE_PATHS, registerProbeRoutes } from "./probe-routes.ts";
import { governorState, RunsQuery, recentRuns } from "./queue-views.ts";
import { requireRedis } from "./require-redis.ts";
import { registerRunHistory } from "./run-history/index.ts";
import { listJobs, triggerJob } from "./trigger-job.ts";

export interface OpsServerOptions {
  config: RuntimeConfig;
  /** The queues to show; opened (and closed with the server) when not given. */
  queues?: Queues;
  /** For readiness, the rate budget and the fleet's counters; connected (and closed) when not given. */
  redis?: Redis;
  logger: Logger;
  /** Default config.ops.port; 0 picks a free port. */
  port?: number;
  /** Default config.ops.host. */
  host?: string;
  /** Default config.ops.probePort; unset serves no probe port, 0 picks a free port. */
  probePort?: number;
  /** Default config.ops.probeHost, else the ops host. */
  probeHost?: string;
  /** Evaluate the alert rules and deliver alerts in this process (default true; nothing runs without a channel). */
  alerts?: boolean;
}

export interface OpsServer {
  /** Where it listens, e.g. http://127.0.0.1:4020; the dashboard is at url + "/ui/". */
  url: string;
  dashboardUrl: string;
  /** Where the probe port listens (/healthz, /readyz, /metrics without auth), when it is on. */
  probeUrl?: string;
  /** Resolves once finished jobs are being counted by /metrics. */
  metricsReady: Promise<void>;
  close(): Promise<void>;
}

/**
 * The credentials basic auth checks, or false when the configuration turns it
 * off; a ConfigError without a password. `worker --ops` asks first, before it
 * connects to anything.
 */
export function opsCredentials(config: RuntimeConfig): { user: string; password: string } | false {
  if (!config.ops.auth) return false;
  if (!config.ops.password) {
    throw new ConfigError(
      "the ops server needs a password: set RECRUIT_SYNC_OPS_PASSWORD (the user is ops.user), or set ops.auth: false in the configuration for a local demo",
      [{ path: "ops.password", message: "set RECRUIT_SYNC_OPS_PASSWORD" }],
    );
  }
  return { user: config.ops.user, password: config.ops.password };
}

function registerRoutes(
  app: FastifyInstance,
  deps: { config: RuntimeConfig; queues: Queues; redis: Redis; metrics: OpsMetrics },
): void {
  const { config, queues, redis, metrics } = deps;
  const needRedis = requireRedis(redis);

  registerProbeRoutes(app, { config, redis, metrics });

  app.get("/api/jobs", async () => {
    const files = await listJobs(config);
    return {
      jobs: files.map((f) =>
        f.ok
          ? { name: f.name, file: f.file, kind: f.definition.kind, valid: true }
          : { name: f.name, file: f.file, valid: false, problems: f.problems },
      ),
    };
  });

  app.post<{ Params: { name: string } }>(
    "/api/jobs/:name/run",
    { preHandler: needRedis },
    async (request, reply) => {
      const triggered = await triggerJob(config, queues, request.params.name, request.body);
      return reply.code(triggered.duplicate ? 200 : 202).send(triggered);
    },
  );

  app.get("/api/runs", { preHandler: needRedis }, async (request) => {
    return { runs: await recentRuns(queues, parseQuery(RunsQuery, request.query)) };
  });

  app.get("/api/governor", { preHandler: needRedis }, async () => governorState(config, queues, redis));
}

/** A server that cannot take its port is a configuration problem: say which setting moves it. */
async function listen(
  app: FastifyInstance,
  where: { port: number; host: string },
  setting: string,
): Promise<string> {
  try {
    await app.listen(where);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      throw new ConfigError(
        `the ops server cannot listen on ${where.host}:${where.port} (${code}): give ${setting} another port`,
        [],
        { cause: err },
      );
    }
    throw err;
  }
  const address = app.server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const shown = host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host;
  return `http://${shown}:${address.port}`;
}

/**
 * The probe port: /healthz, /readyz and /metrics without auth, and a 404 for
 * anything else, so opening it to the cluster's network shows no job data.
 */
function createProbeApp(
  deps: { config: RuntimeConfig; redis: Redis; metrics: OpsMetrics },
  logger: Logger,
): FastifyInstance {
  const app = Fastify({ logger: false });
  installErrorHandler(app, logger);
  registerProbeRoutes(app, deps);
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).send({
      statusCode: 404,
      error: "Not Found",
      message: `the probe port serves ${PROBE_PATHS.join(", ")} only: the dashboard and the ops API are on the ops port, behind the password`,
    }),
  );
  return app;
}

/**
 * Starts the ops HTTP server: the bull-board dashboard at /ui, the ops API
 * (/api/jobs, /api/jobs/:name/run, /api/runs, /api/governor), /healthz,
 * /readyz and /metrics, behind basic auth unless the configuration turns it
 * off; and, when ops.probePort is set, a second port serving /healthz,
 * /readyz and /metrics alone without auth. Runs alone (`recruit-sync ops`)
 * or beside a worker (`worker --ops`, the demo). See docs/ops.md.
 *
 * @example
 * const ops = await startOpsServer({ config, logger, port: 0, probePort: 0 });
 * console.log(`dashboard: ${ops.dashboardUrl}, probes: ${ops.probeUrl}`);
 * await ops.close();
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const { config, logger } = options;
  const auth = opsCredentials(config);
  const owned: { redis?: Redis; connection?: RedisConnection; queues?: Queues } = {};
  if (!options.redis) {
    owned.redis = asRedis(
      // A server that outlives Redis's outages, however long: /readyz says when it is back.
      await connectRedis(config, "the ops server reads the queues and the rate budget there", {
        giveUpAfterMs: null,
      }),
    );
  }
  const redis = (options.redis ?? owned.redis) as Redis;
  let queues = options.queues;
  if (!queues) {
    owned.connection = queueConnection(config);
    owned.queues = openQueues(config, owned.connection);
    queues = owned.queues;
  }
  const metrics = createOpsMetrics({ config, queues, redis, logger });
  // The ops server evaluates the alert rules too: a schedule with no worker left is still noticed.
  const alerts = options.alerts === false ? undefined : await startAlerts({ config, logger, redis, queues });
  const app = Fastify({ logger: false });
  const probePort = options.probePort ?? config.ops.probePort;
  const probeApp = probePort === undefined ? undefined : createProbeApp({ config, redis, metrics }, logger);
  const releaseOwned = async () => {
    await alerts?.close();
    await metrics.close();
    await owned.queues?.close().catch(() => {});
    owned.connection?.disconnect();
    owned.redis?.disconnect();
  };

  const host = options.host ?? config.ops.host;
  let url: string;
  let probeUrl: string | undefined;
  try {
    installErrorHandler(app, logger);
    if (auth) await registerBasicAuth(app, { ...auth, logger });
    registerCrossSiteGuard(app);
    registerRoutes(app, { config, queues, redis, metrics });
    registerForgetRoute(app, { config, redis, logger });
    await registerConsole(app, { config, queues, redis, logger });
    await registerRunHistory(app, { config, queues, redis, alertsQueue: alerts?.queue });
    await registerDashboard(app, { config, queues, redis, logger, alertsQueue: alerts?.queue });
    url = await listen(
      app,
      { port: options.port ?? config.ops.port, host },
      "--port (or ops.port, RECRUIT_SYNC_OPS_PORT)",
    );
    if (probeApp && probePort !== undefined) {
      probeUrl = await listen(
        probeApp,
        { port: probePort, host: options.probeHost ?? config.ops.probeHost ?? host },
        "--probe-port (or ops.probePort, RECRUIT_SYNC_OPS_PROBE_PORT)",
      );
    }
  } catch (err) {
    await probeApp?.close().catch(() => {});
    await app.close().catch(() => {});
    await releaseOwned();
    throw err;
  }

  logger.info(
    { url, dashboard: `${url}${DASHBOARD_PATH}/`, auth: Boolean(auth), ...(probeUrl ? { probeUrl } : {}) },
    "ops server listening",
  );
  let closing: Promise<void> | undefined;
  return {
    url,
    dashboardUrl: `${url}${DASHBOARD_PATH}/`,
    ...(probeUrl ? { probeUrl } : {}),
    metricsReady: metrics.ready,
    close() {
      closing ??= (async () => {
        await probeApp?.close();
        await app.close();
        await releaseOwned();
      })();
      return closing;
    },
  };
}

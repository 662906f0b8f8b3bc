import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { RuntimeConfig } from "../config/index.ts";
import { ConfigError, describeProblems, problemsOf } from "../errors/index.ts";
import { openQueues, type Queues, queueConnection } from "../queue/index.ts";
import { asRedis, connectRedis, type RedisConnection } from "../runtime/index.ts";
import { registerBasicAuth } from "./basic-auth.ts";
import { DASHBOARD_PATH, registerDashboard } from "./dashboard.ts";
import { createOpsMetrics, type OpsMetrics } from "./metrics.ts";
import { OpsHttpError } from "./ops-http-error.ts";
import { governorState, RunsQuery, recentRuns } from "./queue-views.ts";
import { checkRedis, checkWarehouse } from "./readiness.ts";
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
}

export interface OpsServer {
  /** Where it listens, e.g. http://127.0.0.1:4020; the dashboard is at url + "/ui/". */
  url: string;
  dashboardUrl: string;
  /** Resolves once finished jobs are being counted by /metrics. */
  metricsReady: Promise<void>;
  close(): Promise<void>;
}

/** The credentials basic auth checks, or false when the configuration turns it off. */
function credentials(config: RuntimeConfig): { user: string; password: string } | false {
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
  /** Commands would wait in ioredis's offline queue for a minute: answer at once instead. */
  const needRedis = async () => {
    if (redis.status !== "ready") {
      throw new OpsHttpError(
        503,
        "ops_redis_down",
        `Redis does not answer (connection ${redis.status}): the queues, the budget and the metrics live there; see /readyz`,
      );
    }
  };

  app.get("/", (_request, reply) => reply.redirect(`${DASHBOARD_PATH}/`));

  /** Liveness: the process answers. Open without auth, for probes and the container's healthcheck. */
  app.get("/healthz", async () => ({ status: "ok" }));

  /** Readiness: Redis answers and the configured warehouse can be reached; 503 names what is down. */
  app.get("/readyz", async (_request, reply) => {
    const checks = await Promise.all([checkRedis(redis), checkWarehouse(config.warehouse.url)]);
    const down = checks.filter((c) => !c.ok);
    const body = {
      status: down.length ? "unavailable" : "ready",
      ...(down.length ? { down: down.map((c) => `${c.name}: ${c.detail}`) } : {}),
      checks,
    };
    return reply.code(down.length ? 503 : 200).send(body);
  });

  app.get("/metrics", { preHandler: needRedis }, async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });

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
    const parsed = RunsQuery.safeParse(request.query ?? {});
    if (!parsed.success) {
      const problems = problemsOf(parsed.error, { root: "(query)" });
      throw new OpsHttpError(
        400,
        "ops_invalid_query",
        `invalid query: ${describeProblems(problems)}`,
        problems,
      );
    }
    return { runs: await recentRuns(queues, parsed.data) };
  });

  app.get("/api/governor", { preHandler: needRedis }, async () => governorState(config, queues, redis));
}

/**
 * Starts the ops HTTP server: the bull-board dashboard at /ui, the ops API
 * (/api/jobs, /api/jobs/:name/run, /api/runs, /api/governor), /healthz,
 * /readyz and /metrics, behind basic auth unless the configuration turns it
 * off. Runs alone (`recruit-sync ops`) or beside a worker (`worker --ops`,
 * the demo). See docs/ops.md.
 *
 * @example
 * const ops = await startOpsServer({ config, logger, port: 0 });
 * console.log(`dashboard: ${ops.dashboardUrl}`);
 * await ops.close();
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const { config, logger } = options;
  const auth = credentials(config);
  const owned: { redis?: Redis; connection?: RedisConnection; queues?: Queues } = {};
  if (!options.redis) {
    owned.redis = asRedis(
      await connectRedis(config, "the ops server reads the queues and the rate budget there"),
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
  const app = Fastify({ logger: false });
  const releaseOwned = async () => {
    await metrics.close();
    await owned.queues?.close().catch(() => {});
    owned.connection?.disconnect();
    owned.redis?.disconnect();
  };

  try {
    app.setErrorHandler((err, request, reply) => {
      if (err instanceof OpsHttpError) {
        return reply.code(err.status).send({
          error: err.code,
          message: err.message,
          ...(err.problems.length ? { problems: err.problems } : {}),
        });
      }
      const status = (err as { statusCode?: number }).statusCode;
      if (status && status >= 400 && status < 500) {
        // Fastify's own refusals: a body that is not JSON, an unsupported content type.
        return reply.code(status).send({ error: "ops_bad_request", message: (err as Error).message });
      }
      logger.error(
        { method: request.method, url: request.url.split("?")[0], err: (err as Error).message },
        "ops: request failed",
      );
      return reply.code(500).send({ error: "internal", message: (err as Error).message });
    });
    if (auth) await registerBasicAuth(app, { ...auth, logger });
    registerRoutes(app, { config, queues, redis, metrics });
    await registerDashboard(app, { config, queues, logger });
    await app.listen({ port: options.port ?? config.ops.port, host: options.host ?? config.ops.host });
  } catch (err) {
    await app.close().catch(() => {});
    await releaseOwned();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      throw new ConfigError(
        `the ops server cannot listen on ${options.host ?? config.ops.host}:${options.port ?? config.ops.port} (${code}): give --port (or ops.port, RECRUIT_SYNC_OPS_PORT) another port`,
        [],
        { cause: err },
      );
    }
    throw err;
  }

  const address = app.server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const shown = host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host;
  const url = `http://${shown}:${address.port}`;
  logger.info({ url, dashboard: `${url}${DASHBOARD_PATH}/`, auth: Boolean(auth) }, "ops server listening");
  let closing: Promise<void> | undefined;
  return {
    url,
    dashboardUrl: `${url}${DASHBOARD_PATH}/`,
    metricsReady: metrics.ready,
    close() {
      closing ??= (async () => {
        await app.close();
        await releaseOwned();
      })();
      return closing;
    },
  };
}

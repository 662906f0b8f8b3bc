import type { FastifyInstance } from "fastify";
import type { Redis } from "ioredis";
import type { RuntimeConfig } from "../config/index.ts";
import type { OpsMetrics } from "./metrics.ts";
import { readiness } from "./readiness.ts";
import { requireRedis } from "./require-redis.ts";

/** What the probe port serves, and all it serves. */
export const PROBE_PATHS: readonly string[] = ["/healthz", "/readyz", "/metrics"];

/**
 * /healthz, /readyz and /metrics: on the ops port (behind the password but
 * for /healthz) and, when ops.probePort is set, alone on the probe port
 * without auth, for Kubernetes probes and Prometheus.
 */
export function registerProbeRoutes(
  app: FastifyInstance,
  deps: { config: RuntimeConfig; redis: Redis; metrics: OpsMetrics },
): void {
  const { config, redis, metrics } = deps;

  /** Liveness: the process answers. Open without auth, for probes and the container's healthcheck. */
  app.get("/healthz", async () => ({ status: "ok" }));

  /** Readiness: 503 naming what is down; 200 when ready or only degraded (docs/ops.md, "Readiness"). */
  app.get("/readyz", async (_request, reply) => {
    const answer = await readiness(config, redis);
    return reply.code(answer.httpStatus).send(answer.body);
  });

  app.get("/metrics", { preHandler: requireRedis(redis) }, async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
}

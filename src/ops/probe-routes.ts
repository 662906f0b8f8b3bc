import type { FastifyInstance } from "fastify";
import type { Redis } from "ioredis";
import type { RuntimeConfig } from "../config/index.ts";
import type { OpsMetrics } from "./metrics.ts";
import { checkRedis, checkWarehouse } from "./readiness.ts";
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

  app.get("/metrics", { preHandler: requireRedis(redis) }, async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
}

import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { OpsHttpError } from "./ops-http-error.ts";

/**
 * One error handler for the ops port and the probe port: refusals as
 * `{error, message, problems?}`, Fastify's own 4xx as `ops_bad_request`, and
 * anything else logged and answered 500.
 */
export function installErrorHandler(app: FastifyInstance, logger: Logger): void {
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
}

import type { FastifyInstance } from "fastify";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { z } from "zod";
import type { RuntimeConfig } from "../config/index.ts";
import { problemsOf } from "../errors/index.ts";
import { forgetPeople } from "../forget/index.ts";
import { createServiceClient } from "../runtime/service-client.ts";
import { OpsHttpError, opsRefusal } from "./ops-http-error.ts";
import { requireRedis } from "./require-redis.ts";

/** POST /api/forget: the people, as `recruit-sync forget` takes them. */
export const ForgetBody = z
  .object({
    /** Emails and phone numbers. */
    identifiers: z.array(z.string().min(1)).min(1).max(1000),
    /** Also opt them out in the service. */
    optOut: z.boolean().default(false),
  })
  .strict();

/**
 * POST /api/forget: `recruit-sync forget` over the ops API, behind the ops
 * server's basic auth and cross-site guard like every route that changes
 * something. Answers 200 with the receipt (hashes and counts, no person).
 */
export function registerForgetRoute(
  app: FastifyInstance,
  deps: { config: RuntimeConfig; redis: Redis; logger: Logger },
): void {
  app.post("/api/forget", { preHandler: requireRedis(deps.redis) }, async (request) => {
    const parsed = ForgetBody.safeParse(request.body ?? {});
    if (!parsed.success) {
      const problems = problemsOf(parsed.error, { root: "(body)" });
      throw new OpsHttpError(
        400,
        "ops_invalid_request",
        "POST /api/forget takes {identifiers: [emails or phones], optOut?: boolean}",
        problems,
      );
    }
    const service = parsed.data.optOut
      ? await createServiceClient(deps.config, { redis: deps.redis, logger: deps.logger })
      : undefined;
    try {
      return await forgetPeople({
        config: deps.config,
        identifiers: parsed.data.identifiers,
        redis: deps.redis,
        optOutClient: service?.client,
        logger: deps.logger,
      });
    } catch (err) {
      throw opsRefusal(err, "ops_invalid_request");
    } finally {
      await service?.close();
    }
  });
}

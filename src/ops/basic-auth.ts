import { createHash, timingSafeEqual } from "node:crypto";
import fastifyBasicAuth from "@fastify/basic-auth";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { OpsHttpError } from "./ops-http-error.ts";
import { wrongPasswordBrake } from "./wrong-password-brake.ts";

/** Paths anyone may call: a liveness probe must not need the password. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(["/healthz"]);

const REALM = "recruit-sync ops";

/** Equal-length digests compared in constant time, so the answer's timing says nothing of the password. */
function same(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Basic auth in front of every route but OPEN_PATHS, the dashboard's
 * included. A wrong user or password is a 401 logged with the user name and
 * address, never the password; a request without credentials is a plain 401
 * challenge (a browser's first request), not logged.
 */
export async function registerBasicAuth(
  app: FastifyInstance,
  options: { user: string; password: string; logger: Logger },
): Promise<void> {
  const { user, password, logger } = options;
  const brake = wrongPasswordBrake();
  await app.register(fastifyBasicAuth, {
    authenticate: { realm: REALM },
    async validate(givenUser: string, givenPassword: string, request: FastifyRequest) {
      // Both compared whatever the first says, so a wrong user takes as long as a wrong password.
      const ok = [same(givenUser, user), same(givenPassword, password)].every(Boolean);
      if (ok) {
        brake.right(request.ip);
        return;
      }
      brake.wrong(request.ip);
      logger.warn(
        { user: givenUser, ip: request.ip, method: request.method, url: request.url.split("?")[0] },
        "ops: wrong user or password",
      );
      throw new OpsHttpError(401, "ops_unauthorized", "wrong user or password");
    },
  });
  app.addHook("onRequest", (request: FastifyRequest, reply: FastifyReply, done) => {
    if (OPEN_PATHS.has(request.url.split("?")[0] ?? "")) return done();
    const waitMs = brake.waitOf(request.ip);
    if (waitMs > 0) {
      reply
        .code(429)
        .header("retry-after", String(Math.ceil(waitMs / 1000)))
        .send({
          error: "ops_too_many_wrong_passwords",
          message: `too many wrong passwords from this address: try again in ${Math.ceil(waitMs / 1000)} s`,
        });
      return;
    }
    app.basicAuth(request, reply, (err?: Error) => {
      if (!err) return done();
      // Answered here rather than passed on, so the dashboard's own error handler does not reword it.
      reply
        .code(401)
        .header("www-authenticate", `Basic realm="${REALM}", charset="UTF-8"`)
        .send({
          error: "ops_unauthorized",
          message:
            err instanceof OpsHttpError
              ? err.message
              : "basic auth required: the user of ops.user and the password of RECRUIT_SYNC_OPS_PASSWORD",
        });
    });
  });
}

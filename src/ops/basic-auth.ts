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

/** Wrong answers held at once at most: past this a wrong try is answered at once, so a flood cannot pile up sockets. */
const MAX_HELD = 1000;

/**
 * Basic auth in front of every route but OPEN_PATHS, the dashboard's
 * included. Every password is checked, and the right one is let through at
 * once, whatever came before from that address. A wrong user or password is
 * a 401 logged with the user name and address, never the password; past the
 * brake's free tries (per address and user) it is a 429 answered after the
 * brake's hold. A request without credentials is a plain 401 challenge (a
 * browser's first request), not logged.
 */
export async function registerBasicAuth(
  app: FastifyInstance,
  options: { user: string; password: string; logger: Logger },
): Promise<void> {
  const { user, password, logger } = options;
  const brake = wrongPasswordBrake();
  const held = new Set<() => void>();
  /** The brake's hold of a request whose password was wrong, past the free tries. */
  const holdOf = new WeakMap<FastifyRequest, number>();
  // A closing server answers the wrong tries it holds now rather than waiting out their holds.
  app.addHook("preClose", async () => {
    for (const release of [...held]) release();
  });
  const answerAfter = (reply: FastifyReply, holdMs: number, answer: () => void) => {
    if (held.size >= MAX_HELD) return answer();
    const gone = () => {
      clearTimeout(timer);
      held.delete(release);
    };
    const release = () => {
      gone();
      reply.raw.off("close", gone);
      answer();
    };
    const timer = setTimeout(release, holdMs);
    timer.unref();
    held.add(release);
    // A client that hangs up is not answered: its hold ends with it.
    reply.raw.once("close", gone);
  };

  await app.register(fastifyBasicAuth, {
    authenticate: { realm: REALM },
    async validate(givenUser: string, givenPassword: string, request: FastifyRequest) {
      // Both compared whatever the first says, so a wrong user takes as long as a wrong password.
      const ok = [same(givenUser, user), same(givenPassword, password)].every(Boolean);
      if (ok) return;
      const holdMs = brake.wrong(request.ip, givenUser);
      logger.warn(
        {
          user: givenUser,
          ip: request.ip,
          method: request.method,
          url: request.url.split("?")[0],
          ...(holdMs > 0 ? { heldMs: holdMs } : {}),
        },
        "ops: wrong user or password",
      );
      if (holdMs > 0) holdOf.set(request, holdMs);
      throw new OpsHttpError(401, "ops_unauthorized", "wrong user or password");
    },
  });
  app.addHook("onRequest", (request: FastifyRequest, reply: FastifyReply, done) => {
    if (OPEN_PATHS.has(request.url.split("?")[0] ?? "")) return done();
    app.basicAuth(request, reply, (err?: Error) => {
      if (!err) return done();
      const holdMs = holdOf.get(request);
      if (holdMs !== undefined) {
        answerAfter(reply, holdMs, () =>
          reply
            .code(429)
            .removeHeader("www-authenticate")
            .send({
              error: "ops_too_many_wrong_passwords",
              message: `too many wrong passwords for this user from this address, and this one is wrong too: each further wrong one is answered after a wait (this one ${Math.ceil(holdMs / 1000)} s); the right password is answered at once`,
            }),
        );
        return;
      }
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

import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import {
  type Endpoint,
  endpoints,
  type ImportParticipantsBody,
  type ImportResult,
  type OperationId,
  type ValidationErrorItem,
} from "../../api/index.ts";
import type { TokenTable } from "../auth.ts";
import type { EmulatorClock } from "../clock.ts";
import type { FaultDecision, FaultInjector } from "../faults.ts";
import { badRequest, EmulatorHttpError } from "../http-error.ts";
import { planImportFaults } from "../import-faults.ts";
import type { RateLimiter } from "../rate-limiter.ts";
import type { RequestLog } from "../request-log.ts";
import type { Store } from "../store/store.ts";
import { bodySchemaFor } from "./body-schema.ts";
import type { HandlerContext, Handlers } from "./handler-types.ts";
import { EXTRA_PERMISSIONS, handlers } from "./handlers.ts";
import { PreSerialized } from "./pre-serialized.ts";

export const API_PREFIX = "/api/public/v1";

export interface ApiRouteDeps {
  store: () => Store;
  clock: EmulatorClock;
  tokens: TokenTable;
  limiter: RateLimiter;
  faults: FaultInjector;
  log: RequestLog;
}

const JSON_TYPE = "application/json; charset=utf-8";
const TEXT_TYPE = "text/plain; charset=utf-8";
/** Operations whose body may be left out entirely: a search without a body is a search with none of its options. */
const OPTIONAL_BODY = new Set<OperationId>(["searchParticipants", "searchSegments", "searchEmails"]);

export function zodIssuesToErrors(error: z.ZodError): ValidationErrorItem[] {
  return error.issues.map((i) => ({
    message: i.message,
    path: i.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
  }));
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function send(
  reply: FastifyReply,
  status: number,
  contentType: string,
  text: string,
  slowBodyMs: number,
): FastifyReply {
  reply.code(status).header("content-type", contentType);
  if (slowBodyMs <= 0) return reply.send(text);
  const chunks = Math.max(2, Math.min(20, text.length));
  const size = Math.ceil(text.length / chunks);
  const pause = slowBodyMs / chunks;
  async function* trickle() {
    for (let i = 0; i < text.length; i += size) {
      yield Buffer.from(text.slice(i, i + size));
      await sleep(pause);
    }
  }
  return reply.send(Readable.from(trickle()));
}

/** The token's text, or the rate bucket of callers without one. */
function bucketKey(header: string | undefined): string {
  const m = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
  return m?.[1] ? `token:${m[1].trim()}` : "anonymous";
}

/**
 * Registers one route per entry of the endpoint table. Each request passes,
 * in order: faults, authentication, the rate limit, permissions, schema
 * validation of path, query and body, then the operation's handler.
 */
export function registerApiRoutes(app: FastifyInstance, deps: ApiRouteDeps): void {
  for (const ep of Object.values(endpoints) as unknown as Endpoint[]) {
    const operationId = ep.operationId as OperationId;
    const handler = handlers[operationId] as (ctx: HandlerContext, input: unknown) => unknown;
    const required = [...ep.permissions, ...(EXTRA_PERMISSIONS[operationId as keyof Handlers] ?? [])];
    const hasBody = ep.body.type !== "undefined";
    const bodySchema = bodySchemaFor(operationId, ep.body);
    const url = API_PREFIX + ep.path.replace(/\{(\w+)\}/g, ":$1");

    app.route({
      method: ep.method,
      url,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        let slowBodyMs = 0;
        const answer = (status: number, contentType: string, text: string) => {
          deps.log.record(operationId, status);
          return send(reply, status, contentType, text, slowBodyMs);
        };
        const fail = (err: EmulatorHttpError) => {
          if (err.errors) return answer(err.status, JSON_TYPE, JSON.stringify({ errors: err.errors }));
          if (err.reason) reply.header("x-emulator-reason", err.reason.replace(/[^\x20-\x7e]/g, "?"));
          return answer(err.status, TEXT_TYPE, err.message);
        };

        // Tells clients of POST /person that PUT /people/{personIdOrEmail}/opted-out replaces it (spec 9).
        if (ep.deprecated) reply.header("deprecation", "true");
        const auth = req.headers.authorization;
        const key = bucketKey(auth);
        let fault: FaultDecision | undefined;
        if (deps.faults.active) {
          fault = deps.faults.decide(operationId);
          slowBodyMs = fault.slowBodyMs;
          if (fault.latencyMs > 0) await sleep(fault.latencyMs);
          if (fault.drop) {
            deps.log.record(operationId, "dropped");
            reply.hijack();
            req.raw.socket.destroy();
            return reply;
          }
          if (fault.status === 429) {
            reply.headers(deps.limiter.exhaustedHeaders(key));
            return answer(429, TEXT_TYPE, "Too Many Requests");
          }
          if (fault.status === 500) {
            reply.headers(deps.limiter.take(key).headers);
            return answer(500, TEXT_TYPE, "Internal Server Error");
          }
        }
        // Missing or unknown credentials are always 401 (spec 5), never 429: the
        // quota is the token's, so a caller without one has none to exhaust.
        const grant = deps.tokens.authenticate(auth);
        if (!grant) {
          reply.headers(deps.limiter.peek(key));
          return answer(401, TEXT_TYPE, "Unauthorized");
        }
        const rate = deps.limiter.take(key);
        reply.headers(rate.headers);
        if (!rate.allowed) return answer(429, TEXT_TYPE, "Too Many Requests");
        for (const p of required) if (!grant.permissions.has(p)) return answer(403, TEXT_TYPE, "Forbidden");

        try {
          // A malformed path (an empty id) is not a body that failed its schema: spec
          // 4.2 answers it as plain text, and so does every operation here.
          const params = ep.params.safeParse(req.params);
          if (!params.success) {
            const first = params.error.issues[0];
            return fail(badRequest(`path parameter ${first?.path.join(".")}: ${first?.message}`));
          }
          const query = ep.query.safeParse(req.query ?? {});
          if (!query.success)
            return fail(
              new EmulatorHttpError(400, "Bad Request", { errors: zodIssuesToErrors(query.error) }),
            );
          let body: unknown;
          if (hasBody) {
            const raw = typeof req.body === "string" ? req.body : undefined;
            let json: unknown;
            if (raw === undefined || raw.trim() === "") {
              if (!OPTIONAL_BODY.has(operationId)) {
                return fail(
                  new EmulatorHttpError(400, "Bad Request", {
                    errors: [{ message: "Request body is required", path: [] }],
                  }),
                );
              }
              json = {};
            } else {
              try {
                json = JSON.parse(raw);
              } catch {
                return fail(
                  new EmulatorHttpError(400, "Bad Request", {
                    errors: [{ message: "Request body is not valid JSON", path: [] }],
                  }),
                );
              }
            }
            const parsed = bodySchema.safeParse(json);
            if (!parsed.success)
              return fail(
                new EmulatorHttpError(400, "Bad Request", { errors: zodIssuesToErrors(parsed.error) }),
              );
            body = parsed.data;
          }
          const importFault =
            operationId === "importParticipants"
              ? planImportFaults(fault, deps.faults, body as ImportParticipantsBody)
              : undefined;
          let result = handler(
            { store: deps.store(), clock: deps.clock, grant },
            { params: params.data, query: query.data, body: importFault?.body ?? body },
          );
          if (importFault !== undefined)
            result = importFault.answer(result as ImportResult, (params.data as { studyId: string }).studyId);
          const json = result instanceof PreSerialized ? result.json : JSON.stringify(result);
          return answer(ep.successStatus, JSON_TYPE, json);
        } catch (err) {
          if (err instanceof EmulatorHttpError) return fail(err);
          req.log.error({ err, operationId }, "emulator handler failed");
          return answer(500, TEXT_TYPE, "Internal Server Error");
        }
      },
    });
  }
}

/** Unknown routes under the prefix still count against the rate limit and carry its headers. */
export function apiNotFound(deps: ApiRouteDeps, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (req.url.startsWith(API_PREFIX)) {
    reply.headers(deps.limiter.take(bucketKey(req.headers.authorization)).headers);
    deps.log.record("notFound", 404);
  }
  return reply.code(404).header("content-type", TEXT_TYPE).send("Not Found");
}

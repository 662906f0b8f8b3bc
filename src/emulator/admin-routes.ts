import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import { PropertyValue, SCREENER_TYPES, STUDY_STATUSES, STUDY_TYPES } from "../api/index.ts";
import { adminGuard } from "./admin-auth.ts";
import { FaultsBody } from "./faults.ts";
import { RATE_LIMIT_RESET_UNITS } from "./rate-limiter.ts";
import { type ApiRouteDeps, zodIssuesToErrors } from "./routes/api-routes.ts";
import { SeedSizes, seededScreener, studyRecord } from "./seed.ts";
import { newContactFields, type PersonRecord } from "./store/records.ts";
import {
  loadPerson,
  loadSnapshot,
  SNAPSHOT_COLLECTIONS,
  Snapshot,
  snapshotJsonChunks,
  studyView,
} from "./store/snapshot.ts";

export const ADMIN_PREFIX = "/__emulator";

/** The parts the public API serves from (its tokens aside: the admin API has its own), and the admin's own. */
export interface AdminDeps extends Omit<ApiRouteDeps, "tokens"> {
  /** Reseeds; with arguments they become the new baseline that /reset returns to. */
  reseed: (seed?: number, sizes?: z.infer<typeof SeedSizesPatch>) => void;
  /** Why a reseed with these sizes (merged onto the current ones) cannot be held, or undefined. */
  seedTooLarge: (sizes?: z.infer<typeof SeedSizesPatch>) => string | undefined;
  /** Back to the baseline: store reseeded, faults cleared, rate windows and request counts reset, clock to real time. */
  reset: () => void;
  /** When set, every admin request must carry `Authorization: Bearer <adminToken>`. */
  adminToken?: string | undefined;
}

const SeedSizesPatch = SeedSizes.partial();
const Instant = z.union([z.iso.datetime({ offset: true }), z.number()]);
const Duration = z.union([
  z.number(),
  z
    .string()
    .regex(/^\s*-?\d+(\.\d+)?\s*(ms|s|m|h|d|y)\s*$/, "a duration like 400d, 12h, 30m, 10s, 500ms or 1y"),
]);
const ClockBody = z
  .object({
    now: Instant.optional(),
    set: Instant.optional(),
    advance: Duration.optional(),
    advanceMs: z.number().optional(),
    advanceSeconds: z.number().optional(),
    advanceDays: z.number().optional(),
    reset: z.boolean().optional(),
  })
  .strict();

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  y: 365 * 86_400_000,
};
function durationMs(d: z.infer<typeof Duration>): number {
  if (typeof d === "number") return d;
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*(ms|s|m|h|d|y)\s*$/.exec(d);
  return Number(m?.[1]) * (UNIT_MS[m?.[2] ?? "ms"] ?? 1);
}
const toMs = (i: z.infer<typeof Instant>) => (typeof i === "number" ? i : Date.parse(i));

const SeedBody = z.object({ seed: z.number().int().optional(), sizes: SeedSizesPatch.optional() }).strict();
const RateLimitBody = z.union([
  z.object({ off: z.literal(true) }).strict(),
  z
    .object({
      requests: z.number().int().positive(),
      windowSeconds: z.number().positive(),
      resetUnit: z.enum(RATE_LIMIT_RESET_UNITS).optional(),
    })
    .strict(),
]);
const CreateStudyBody = z
  .object({
    studyId: z.string().min(1).optional(),
    name: z.string().optional(),
    studyType: z.enum(STUDY_TYPES).default("INTERVIEWS"),
    status: z.enum(STUDY_STATUSES).default("DRAFT"),
    /** "none", or the type of screener the study starts with. */
    screener: z.enum(["none", ...SCREENER_TYPES]).default("none"),
  })
  .strict();
const CreatePeopleBody = z
  .object({
    people: z.array(
      z
        .object({
          personId: z.string().min(1).optional(),
          email: z.string().nullable().optional(),
          phone: z.string().nullable().optional(),
          firstName: z.string().nullable().optional(),
          lastName: z.string().nullable().optional(),
          isOptedOut: z.boolean().optional(),
          lastContactDate: z.string().nullable().optional(),
          additionalEmails: z.array(z.string()).optional(),
          additionalPhones: z.array(z.string()).optional(),
          properties: z.array(z.object({ propertyId: z.string(), value: PropertyValue })).optional(),
          populationIds: z.array(z.string()).optional(),
        })
        .strict(),
    ),
  })
  .strict();

/**
 * A PUT /snapshot body: an object naming at least one collection, every key a
 * known one. An empty body or `{"a":1}` would otherwise parse as an empty
 * snapshot and wipe the store.
 */
const JournalQuery = z.object({ since: z.coerce.number().int().nonnegative().default(0) }).strict();
const SnapshotBody = z
  .record(z.string(), z.unknown())
  .refine((o) => Object.keys(o).length > 0, {
    message: `a snapshot names at least one of ${SNAPSHOT_COLLECTIONS.join(", ")}; GET /__emulator/snapshot shows the shape`,
  })
  .pipe(Snapshot);

function parseJson(raw: unknown): unknown {
  if (typeof raw !== "string" || raw.trim() === "") return {};
  return JSON.parse(raw);
}

/** Parses an admin body with a schema, answering 400 JSON itself when it does not fit. */
function body<T extends z.ZodType>(schema: T, raw: unknown, reply: FastifyReply): z.infer<T> | undefined {
  let json: unknown;
  try {
    json = parseJson(raw);
  } catch {
    reply.code(400).send({ errors: [{ message: "Request body is not valid JSON", path: [] }] });
    return undefined;
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    reply.code(400).send({ errors: adminIssues(parsed.error) });
    return undefined;
  }
  return parsed.data;
}

/** Issues as `{message, path}`; an unknown key is named in its own path rather than only in the message. */
function adminIssues(error: z.ZodError): ReturnType<typeof zodIssuesToErrors> {
  return zodIssuesToErrors(error).flatMap((item, i) => {
    const issue = error.issues[i];
    if (issue?.code !== "unrecognized_keys") return [item];
    return issue.keys.map((key) => ({ message: `Unknown key "${key}"`, path: [...item.path, key] }));
  });
}

/**
 * The admin API (only served when enabled; behind its own token when
 * `deps.adminToken` is set): inspect and replace the store, count requests,
 * reset, reseed, set faults, rate limit and clock, and create studies or
 * people quickly for tests.
 */
export function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps): void {
  // An encapsulated scope, so the token check covers these routes and no others.
  app.register(async (scope) => {
    const { adminToken } = deps;
    if (adminToken !== undefined) scope.addHook("onRequest", adminGuard(adminToken));
    adminRoutes(scope, deps);
  });
}

function adminRoutes(app: FastifyInstance, deps: AdminDeps): void {
  const p = ADMIN_PREFIX;
  const clockView = () => ({ now: deps.clock.nowIso(), offsetMs: deps.clock.offsetMs });

  app.get(p, async () => ({
    endpoints: [
      "GET /snapshot",
      "PUT /snapshot",
      "GET /requests",
      "GET /requests/journal",
      "DELETE /requests",
      "POST /requests/reset",
      "POST /reset",
      "POST /seed",
      "GET /faults",
      "POST /faults",
      "DELETE /faults",
      "GET /faults/dropped",
      "GET /clock",
      "POST /clock",
      "GET /rate-limit",
      "POST /rate-limit",
      "POST /studies",
      "POST /people",
      "GET /people/:personIdOrEmail",
    ].map((e) => e.replace(" /", ` ${p}/`)),
  }));

  app.get(`${p}/snapshot`, async (_req, reply) => {
    reply.header("content-type", "application/json; charset=utf-8");
    return reply.send(Readable.from(snapshotJsonChunks(deps.store(), deps.clock.now())));
  });
  app.put(`${p}/snapshot`, { bodyLimit: 2 ** 30 }, async (req, reply) => {
    // Parsed whole before the store is touched: a refused snapshot leaves it as it was.
    const snap = body(SnapshotBody, req.body, reply);
    if (!snap) return reply;
    const store = deps.store();
    loadSnapshot(store, snap);
    // What the store took: a person or study listed twice is one record.
    return { loaded: true, people: store.people.size, studies: store.studies.size };
  });

  app.get(`${p}/requests`, async () => deps.log.summary());
  app.get(`${p}/requests/journal`, async (req, reply) => {
    const q = JournalQuery.safeParse(req.query);
    if (!q.success) return reply.code(400).send({ errors: adminIssues(q.error) });
    return { entries: deps.log.journal(q.data.since) };
  });
  app.delete(`${p}/requests`, async () => {
    deps.log.reset();
    return deps.log.summary();
  });
  app.post(`${p}/requests/reset`, async () => {
    deps.log.reset();
    return deps.log.summary();
  });

  app.post(`${p}/reset`, async () => {
    deps.reset();
    return { reset: true, clock: clockView() };
  });
  app.post(`${p}/seed`, async (req, reply) => {
    const b = body(SeedBody, req.body, reply);
    if (!b) return reply;
    const tooLarge = deps.seedTooLarge(b.sizes);
    if (tooLarge !== undefined)
      return reply.code(400).send({ errors: [{ message: tooLarge, path: ["sizes"] }] });
    deps.reseed(b.seed, b.sizes);
    const store = deps.store();
    return { seeded: true, people: store.people.size, studies: store.studies.size };
  });

  app.get(`${p}/faults`, async () => ({ faults: deps.faults.list() }));
  app.post(`${p}/faults`, async (req, reply) => {
    const b = body(FaultsBody, req.body, reply);
    if (!b) return reply;
    if (Array.isArray(b)) deps.faults.set(b, true);
    else if ("faults" in b) deps.faults.set(b.faults, b.replace);
    else deps.faults.set([b], true);
    return { faults: deps.faults.list() };
  });
  // Who imports under `dropPeopleRate` accepted and did not keep, so a test can check they are found missing.
  app.get(`${p}/faults/dropped`, async () => ({ people: deps.faults.droppedPeople }));
  app.delete(`${p}/faults`, async () => {
    deps.faults.set([], true);
    return { faults: [] };
  });

  app.get(`${p}/clock`, async () => clockView());
  app.post(`${p}/clock`, async (req, reply) => {
    const b = body(ClockBody, req.body, reply);
    if (!b) return reply;
    if (b.reset) deps.clock.offsetMs = 0;
    const at = b.now ?? b.set;
    if (at !== undefined) deps.clock.set(toMs(at));
    if (b.advance !== undefined) deps.clock.advance(durationMs(b.advance));
    if (b.advanceMs !== undefined) deps.clock.advance(b.advanceMs);
    if (b.advanceSeconds !== undefined) deps.clock.advance(b.advanceSeconds * 1000);
    if (b.advanceDays !== undefined) deps.clock.advance(b.advanceDays * 86_400_000);
    return clockView();
  });

  app.get(`${p}/rate-limit`, async () => ({ rateLimit: deps.limiter.options }));
  app.post(`${p}/rate-limit`, async (req, reply) => {
    const b = body(RateLimitBody, req.body, reply);
    if (!b) return reply;
    const current = deps.limiter.options;
    deps.limiter.options =
      "off" in b
        ? false
        : {
            requests: b.requests,
            windowSeconds: b.windowSeconds,
            resetUnit: b.resetUnit ?? (current === false ? "delta-seconds" : current.resetUnit),
          };
    deps.limiter.reset();
    return { rateLimit: deps.limiter.options };
  });

  app.post(`${p}/studies`, async (req, reply) => {
    const b = body(CreateStudyBody, req.body, reply);
    if (!b) return reply;
    const store = deps.store();
    const studyId = b.studyId ?? store.ids.next("study");
    store.ids.observe(studyId);
    const n = Number(/(\d+)$/.exec(studyId)?.[1] ?? store.studies.size + 1);
    const createdAt = deps.clock.nowIso();
    const study = studyRecord({
      studyId,
      n,
      type: b.studyType,
      status: b.status,
      screenerKind: b.screener,
      owner: store.users.values().next().value,
      createdAt,
      name: b.name,
    });
    // A study posted under a known id (or one that messages and incentives of
    // a deleted study still name) starts empty, as a new study does: keeping
    // its messages and incentives beside no participants left the store
    // holding records of a participation that no longer existed.
    store.dropStudyContents(studyId);
    store.studies.set(studyId, study);
    if (b.screener !== "none")
      store.screeners.set(studyId, seededScreener(store, studyId, b.screener, [], createdAt));
    return reply.code(201).send(studyView(store, study));
  });

  app.post(`${p}/people`, { bodyLimit: 2 ** 28 }, async (req, reply) => {
    const b = body(CreatePeopleBody, req.body, reply);
    if (!b) return reply;
    const store = deps.store();
    const created: PersonRecord[] = b.people.map((input) => {
      const person: PersonRecord = {
        personId: input.personId ?? store.ids.next("person"),
        ...newContactFields(input),
        additionalEmails: input.additionalEmails ?? [],
        additionalPhones: input.additionalPhones ?? [],
        properties: input.properties ?? [],
        populationIds: input.populationIds ?? [],
      };
      // A known personId replaces that person, as a snapshot listing it again does.
      loadPerson(store, person);
      return person;
    });
    return reply.code(201).send({ people: created });
  });

  app.get<{ Params: { personIdOrEmail: string } }>(`${p}/people/:personIdOrEmail`, async (req, reply) => {
    const store = deps.store();
    const key = req.params.personIdOrEmail;
    // By any of a person's emails, as the service's opt-out looks people up.
    const people = key.includes("@") ? store.peopleByAnyEmail(key) : [store.people.get(key)].filter(Boolean);
    if (people.length === 0) return reply.code(404).send({ error: "Person not found" });
    return { people };
  });
}

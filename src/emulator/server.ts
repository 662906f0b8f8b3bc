import Fastify, { type FastifyInstance } from "fastify";
import { z } from "zod";
import { buildOpenApi, type Permission } from "../api/index.ts";
import { ConfigError } from "../errors/index.ts";
import { adminTokenRequired, isLoopbackHost, randomToken } from "./admin-auth.ts";
import { registerAdminRoutes } from "./admin-routes.ts";
import { TokenTable } from "./auth.ts";
import { EmulatorClock } from "./clock.ts";
import { FaultInjector } from "./faults.ts";
import { EmulatorOptions, type EmulatorOptionsInput } from "./options.ts";
import { RateLimiter } from "./rate-limiter.ts";
import { RequestLog } from "./request-log.ts";
import { API_PREFIX, apiNotFound, registerApiRoutes } from "./routes/api-routes.ts";
import { type SeedSizesInput, seedStore } from "./seed.ts";
import { seedTooLarge } from "./seed-budget.ts";
import { loadState, saveState, stateFileExists } from "./store/state-file.ts";
import { Store } from "./store/store.ts";

export interface RunningEmulator {
  /** The service's base URL, including /api/public/v1. */
  baseUrl: string;
  /** scheme://host:port, where /__emulator and /openapi.json live. */
  origin: string;
  tokens: { token: string; permissions: Permission[] }[];
  /** The admin API's token (given, or random); undefined only when it was opened with `openAdmin` or is off. */
  adminToken: string | undefined;
  store: Store;
  clock: EmulatorClock;
  /** Whether the store came from the --state file rather than the seed. */
  restoredFromState: boolean;
  /** Writes the store to the state file (when one is configured). */
  saveState(): Promise<void>;
  /** Stops serving; saves the state file first when one is configured. */
  close(): Promise<void>;
}

/**
 * Starts the emulator: a local HTTP server of the whole service interface,
 * built from the endpoint table in src/api.
 *
 * @example
 * const emu = await startEmulator({ port: 0, tokens: ["t1", "t2:view_emails"] });
 * const client = createClient({ baseUrl: emu.baseUrl, token: "t1" });
 * await emu.close();
 */
export async function startEmulator(input: EmulatorOptionsInput = {}): Promise<RunningEmulator> {
  const parsed = EmulatorOptions.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
    throw new ConfigError(
      `invalid emulator options: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`,
      issues,
    );
  }
  const options = parsed.data;
  const loopback = isLoopbackHost(options.host);
  if (options.openAdmin && options.requireAdminToken === true) {
    throw new ConfigError(
      "--open-admin (openAdmin) and --require-admin-token (requireAdminToken) contradict each other: drop one",
      [{ path: "openAdmin", message: "drop openAdmin (or requireAdminToken)" }],
    );
  }
  if (options.admin && options.openAdmin && options.adminToken === undefined && !loopback) {
    throw new ConfigError(
      `the admin API cannot be open on ${options.host}: anyone who reaches it reads every person; drop --open-admin (openAdmin) or listen on 127.0.0.1`,
      [{ path: "openAdmin", message: "only on loopback" }],
    );
  }
  // Beyond loopback the well-known default token would let anyone in: make one nobody knows.
  const tokens = new TokenTable(
    options.tokens.length === 0 && !loopback ? [randomToken("emu_")] : options.tokens,
  );
  const adminToken =
    options.admin && adminTokenRequired(options)
      ? (options.adminToken ?? randomToken("emu_admin_"))
      : undefined;
  const tooLarge = seedTooLarge(options.sizes, options.maxSeedMemoryMb);
  if (tooLarge !== undefined) throw new ConfigError(tooLarge, [{ path: "sizes", message: tooLarge }]);
  const clock = new EmulatorClock();
  if (options.clock !== undefined) {
    clock.set(typeof options.clock === "number" ? options.clock : Date.parse(options.clock));
  }
  const limiter = new RateLimiter(
    options.rateLimit === false ? false : { ...options.rateLimit, resetUnit: options.resetUnit },
  );
  const faults = new FaultInjector(options.seed, options.faults);
  const log = new RequestLog();
  const store = new Store();
  let seed = options.seed;
  let sizes: SeedSizesInput = options.sizes;
  const initialClockOffset = clock.offsetMs;

  let restoredFromState = false;
  if (options.stateFile && (await stateFileExists(options.stateFile))) {
    try {
      clock.offsetMs = await loadState(options.stateFile, store);
    } catch (err) {
      const issue = err instanceof z.ZodError ? err.issues[0] : undefined;
      const why = issue
        ? `${issue.path.join(".")}: ${issue.message}`
        : err instanceof Error
          ? err.message
          : String(err);
      throw new ConfigError(
        `state file ${options.stateFile} cannot be restored (${why}): move it away to start from the seed`,
        [],
        { cause: err },
      );
    }
    restoredFromState = true;
  } else {
    seedStore(store, seed, sizes, clock.now());
  }

  const app: FastifyInstance = Fastify({
    logger: false,
    bodyLimit: 16 * 1024 * 1024,
    forceCloseConnections: true,
    routerOptions: { maxParamLength: 1000 },
  });
  // Every body is read as text and parsed by the route, so a body that is not
  // JSON gets the spec's 400 JSON answer rather than the framework's own.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_req, body, done) => done(null, body));
  app.setErrorHandler((err: { statusCode?: number }, _req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    const text =
      status === 500 ? "Internal Server Error" : status === 413 ? "Payload Too Large" : "Bad Request";
    return reply.code(status).header("content-type", "text/plain; charset=utf-8").send(text);
  });

  const deps = { store: () => store, clock, tokens, limiter, faults, log };
  registerApiRoutes(app, deps);
  app.setNotFoundHandler((req, reply) => apiNotFound(deps, req, reply));

  let origin = "";
  app.get("/openapi.json", async () => ({ ...buildOpenApi(), servers: [{ url: `${origin}${API_PREFIX}` }] }));

  if (options.admin) {
    registerAdminRoutes(app, {
      ...deps,
      adminToken,
      seedTooLarge: (newSizes) => seedTooLarge({ ...sizes, ...newSizes }, options.maxSeedMemoryMb),
      reseed: (newSeed, newSizes) => {
        if (newSeed !== undefined) seed = newSeed;
        if (newSizes !== undefined) sizes = { ...sizes, ...newSizes };
        seedStore(store, seed, sizes, clock.now());
      },
      reset: () => {
        clock.offsetMs = initialClockOffset;
        seedStore(store, seed, sizes, clock.now());
        faults.set([], true);
        faults.clearDropped();
        limiter.reset();
        log.reset();
      },
    });
  }

  await app.listen({ port: options.port, host: options.host });
  const address = app.server.address();
  if (address === null || typeof address === "string")
    throw new Error("the emulator is not listening on TCP");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  origin = `http://${host}:${address.port}`;

  const save = async () => {
    if (options.stateFile) await saveState(options.stateFile, store, clock.offsetMs, clock.now());
  };
  let closed: Promise<void> | undefined;
  return {
    baseUrl: `${origin}${API_PREFIX}`,
    origin,
    tokens: tokens.list(),
    adminToken,
    store,
    clock,
    restoredFromState,
    saveState: save,
    close: () => {
      closed ??= (async () => {
        await app.close();
        await save();
      })();
      return closed;
    },
  };
}

import type { Command } from "commander";
import {
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_RATE_LIMIT,
  DEFAULT_SEED,
  DEFAULT_TOKEN,
  type EmulatorOptionsInput,
  FaultRule,
  type FaultRuleInput,
  parseLatency,
  parseRateLimit,
  RATE_LIMIT_RESET_UNITS,
  type SeedSizesInput,
  startEmulator,
} from "../../emulator/index.ts";
import { ConfigError } from "../../errors/index.ts";

interface EmulatorFlags {
  port: string;
  host: string;
  seed: string;
  people?: string;
  studies?: string;
  participantsPerStudy?: string;
  properties?: string;
  incentives?: string;
  emails?: string;
  segments?: string;
  populations?: string;
  rateLimit: string;
  resetUnit: string;
  token: string[];
  state?: string;
  admin: boolean;
  adminToken?: string;
  requireAdminToken?: boolean;
  maxSeedMemory?: string;
  clock?: string;
  errorRate?: string;
  latency?: string;
  dropRate?: string;
  tooManyRequestsRate?: string;
  storm?: string;
  slowBody?: string;
  fault: string[];
}

const collect = (value: string, previous: string[]) => [...previous, value];

function int(flag: string, value: string | undefined, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new ConfigError(`--${flag} must be an integer ≥ ${min}, got "${value}"`);
  return n;
}

function share(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n >= 0 && n <= 1))
    throw new ConfigError(`--${flag} must be a number between 0 and 1, got "${value}"`);
  return n;
}

/** Environment variables the command reads when the matching flag is absent; empty counts as unset. */
export const EMULATOR_ENV = {
  /** Service tokens, `TOKEN[:PERM,…]` separated by spaces (for `--token`). */
  tokens: "RECRUIT_SYNC_EMULATOR_TOKENS",
  /** The admin API's token (for `--admin-token`). */
  adminToken: "RECRUIT_SYNC_EMULATOR_ADMIN_TOKEN",
} as const;

const fromEnv = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
};

/** Turns the command line into startEmulator options; every mistake is a ConfigError (exit 2). */
export function emulatorOptionsFromFlags(
  flags: EmulatorFlags,
  env: NodeJS.ProcessEnv = process.env,
): EmulatorOptionsInput {
  const sizes: SeedSizesInput = {};
  const setSize = (key: keyof SeedSizesInput, flag: string, value: string | undefined) => {
    const n = int(flag, value);
    if (n !== undefined) sizes[key] = n;
  };
  setSize("people", "people", flags.people);
  setSize("studies", "studies", flags.studies);
  setSize("participantsPerStudy", "participants-per-study", flags.participantsPerStudy);
  setSize("properties", "properties", flags.properties);
  setSize("incentives", "incentives", flags.incentives);
  setSize("emailMessages", "emails", flags.emails);
  setSize("segments", "segments", flags.segments);
  setSize("populations", "populations", flags.populations);

  if (!(RATE_LIMIT_RESET_UNITS as readonly string[]).includes(flags.resetUnit)) {
    throw new ConfigError(
      `--reset-unit must be one of ${RATE_LIMIT_RESET_UNITS.join(", ")}, got "${flags.resetUnit}"`,
    );
  }

  const faults: FaultRuleInput[] = [];
  const global: FaultRuleInput = { route: "*" };
  const errorRate = share("error-rate", flags.errorRate);
  if (errorRate !== undefined) global.errorRate = errorRate;
  const dropRate = share("drop-rate", flags.dropRate);
  if (dropRate !== undefined) global.dropRate = dropRate;
  const tooMany = share("too-many-requests-rate", flags.tooManyRequestsRate);
  if (tooMany !== undefined) global.tooManyRequestsRate = tooMany;
  const storm = int("storm", flags.storm, 1);
  if (storm !== undefined) global.stormSeconds = storm;
  const slow = int("slow-body", flags.slowBody);
  if (slow !== undefined) global.slowBodyMs = slow;
  if (flags.latency !== undefined) {
    const latency = parseLatency(flags.latency);
    if (latency === undefined)
      throw new ConfigError(`--latency must be MS or MIN-MAX (e.g. 50 or 20-200), got "${flags.latency}"`);
    global.latencyMs = latency;
  }
  if (Object.keys(global).length > 1) faults.push(global);
  for (const text of flags.fault) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ConfigError(
        `--fault must be a JSON object such as '{"route":"searchParticipants","errorRate":0.5}'`,
      );
    }
    const parsed = FaultRule.safeParse(json);
    if (!parsed.success) {
      throw new ConfigError(
        `--fault ${text}: ${parsed.error.issues[0]?.path.join(".")} ${parsed.error.issues[0]?.message}`,
      );
    }
    faults.push(parsed.data);
  }

  const tokens =
    flags.token.length > 0 ? flags.token : (fromEnv(env, EMULATOR_ENV.tokens)?.split(/\s+/) ?? []);
  const adminToken = flags.adminToken ?? fromEnv(env, EMULATOR_ENV.adminToken);
  if (adminToken !== undefined && adminToken.trim() === "")
    throw new ConfigError("--admin-token must not be empty");
  const maxSeedMemoryMb = int("max-seed-memory", flags.maxSeedMemory, 1);

  return {
    port: int("port", flags.port) ?? DEFAULT_PORT,
    host: flags.host,
    seed: int("seed", flags.seed) ?? DEFAULT_SEED,
    sizes,
    tokens,
    rateLimit: parseRateLimit(flags.rateLimit),
    resetUnit: flags.resetUnit as (typeof RATE_LIMIT_RESET_UNITS)[number],
    faults,
    admin: flags.admin,
    ...(adminToken === undefined ? {} : { adminToken }),
    requireAdminToken: flags.requireAdminToken === true,
    ...(maxSeedMemoryMb === undefined ? {} : { maxSeedMemoryMb }),
    ...(flags.state === undefined ? {} : { stateFile: flags.state }),
    ...(flags.clock === undefined ? {} : { clock: flags.clock }),
  };
}

/** `recruit-sync emulator`: the local service for tests, demos and rehearsing imports. */
export function registerEmulatorCommand(program: Command): void {
  program
    .command("emulator")
    .description(
      "Start the service emulator: the whole public interface on a local port, seeded, with an admin API",
    )
    .option("--port <n>", "port to listen on (0 picks a free one)", String(DEFAULT_PORT))
    .option("--host <host>", "address to listen on", DEFAULT_HOST)
    .option("--seed <n>", "seed of the generated workspace", String(DEFAULT_SEED))
    .option("--people <n>", "people in the workspace (default 500)")
    .option("--studies <n>", "studies, at least 12 (default 12)")
    .option("--participants-per-study <n>", "participants seeded in each study (default 25)")
    .option("--properties <n>", "person properties, at least 8 (default 40)")
    .option("--incentives <n>", "incentives, at least 10 (default 60)")
    .option("--emails <n>", "email messages (default 300)")
    .option("--segments <n>", "segments (default 30)")
    .option("--populations <n>", "populations (default 3)")
    .option(
      "--rate-limit <spec>",
      "requests per window per token, REQUESTS/SECONDSs, or off",
      `${DEFAULT_RATE_LIMIT.requests}/${DEFAULT_RATE_LIMIT.windowSeconds}s`,
    )
    .option(
      "--reset-unit <unit>",
      `unit of X-RateLimit-Reset: ${RATE_LIMIT_RESET_UNITS.join(" or ")}`,
      "delta-seconds",
    )
    .option(
      "--token <TOKEN[:PERM,…]>",
      `an accepted token (repeatable); no list = every permission, "TOKEN:" = none; default ${DEFAULT_TOKEN} on loopback, a random one beyond (env ${EMULATOR_ENV.tokens}, space-separated)`,
      collect,
      [],
    )
    .option("--state <file>", "restore the store from FILE when it exists, save it there on exit")
    .option("--no-admin", "do not serve the /__emulator admin API")
    .option(
      "--admin-token <token>",
      `the admin API's token, required as Authorization: Bearer (env ${EMULATOR_ENV.adminToken}); random when required and not given`,
    )
    .option(
      "--require-admin-token",
      "require the admin token on loopback too (always required beyond 127.0.0.0/8, ::1, localhost)",
    )
    .option(
      "--max-seed-memory <MB>",
      "refuse seeds estimated above MB of heap (default 70% of the heap limit)",
    )
    .option("--clock <iso>", "start the emulator's clock at this time")
    .option("--error-rate <share>", "answer this share of requests 500 (0–1)")
    .option("--latency <ms>", "add latency to every request: MS or MIN-MAX")
    .option("--drop-rate <share>", "destroy the connection of this share of requests (0–1)")
    .option("--too-many-requests-rate <share>", "answer this share of requests 429 (0–1)")
    .option("--storm <seconds>", "answer every request 429 for the first SECONDS")
    .option("--slow-body <ms>", "trickle every response body out over MS")
    .option(
      "--fault <json>",
      'a per-route fault rule, e.g. \'{"route":"searchEmails","errorRate":0.2}\' (repeatable)',
      collect,
      [],
    )
    .action(async (flags: EmulatorFlags) => {
      const emulator = await startEmulator(emulatorOptionsFromFlags(flags));
      const out = process.stdout;
      out.write(`Emulator listening: ${emulator.baseUrl}\n`);
      out.write(`  OpenAPI:   ${emulator.origin}/openapi.json\n`);
      if (flags.admin) {
        out.write(
          `  Admin API: ${emulator.origin}/__emulator${emulator.adminToken === undefined ? " (no token: loopback only)" : ""}\n`,
        );
      }
      out.write(
        `  Store:     ${emulator.restoredFromState ? `restored from ${flags.state}` : `seed ${flags.seed}`}, ${emulator.store.people.size} people, ${emulator.store.studies.size} studies\n`,
      );
      for (const t of emulator.tokens) {
        out.write(
          `  Token:     ${t.token} (${t.permissions.length ? t.permissions.join(", ") : "no permissions"})\n`,
        );
      }
      if (emulator.adminToken !== undefined) out.write(`  Admin token: ${emulator.adminToken}\n`);
      out.write("Stop with Ctrl-C.\n");
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          resolve();
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
      });
      await emulator.close();
      out.write(flags.state ? `Emulator stopped; state saved to ${flags.state}\n` : "Emulator stopped\n");
    });
}

// The flags of `recruit-sync emulator` turned into startEmulator options: loaded
// by the command's action, so that the CLI starts without zod and the emulator.
import {
  DEFAULT_PORT,
  DEFAULT_SEED,
  EMULATOR_ENV,
  type EmulatorOptionsInput,
  FaultRule,
  type FaultRuleInput,
  parseLatency,
  parseRateLimit,
  RATE_LIMIT_RESET_UNITS,
  type SeedSizesInput,
} from "../../emulator/index.ts";
import { ConfigError } from "../../errors/index.ts";

export interface EmulatorFlags {
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
  openAdmin?: boolean;
  maxSeedMemory?: string;
  clock?: string;
  errorRate?: string;
  latency?: string;
  dropRate?: string;
  tooManyRequestsRate?: string;
  storm?: string;
  slowBody?: string;
  dropPeopleRate?: string;
  countOffset?: string;
  fault: string[];
}

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

const fromEnv = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
};

/** `--drop-people-rate` and `--count-offset`: one rule on importParticipants, the only route they touch. */
function importFaultRule(flags: EmulatorFlags): FaultRuleInput | undefined {
  const rule: FaultRuleInput = { route: "importParticipants" };
  const dropPeople = share("drop-people-rate", flags.dropPeopleRate);
  if (dropPeople !== undefined) rule.dropPeopleRate = dropPeople;
  if (flags.countOffset !== undefined) {
    const n = Number(flags.countOffset);
    if (!Number.isInteger(n) || n === 0)
      throw new ConfigError(`--count-offset must be a whole number other than 0, got "${flags.countOffset}"`);
    rule.countOffset = n;
  }
  return Object.keys(rule).length > 1 ? rule : undefined;
}

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
  const importRule = importFaultRule(flags);
  if (importRule !== undefined) faults.push(importRule);
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
    openAdmin: flags.openAdmin === true,
    ...(flags.requireAdminToken === true ? { requireAdminToken: true } : {}),
    ...(maxSeedMemoryMb === undefined ? {} : { maxSeedMemoryMb }),
    ...(flags.state === undefined ? {} : { stateFile: flags.state }),
    ...(flags.clock === undefined ? {} : { clock: flags.clock }),
  };
}

/** The emulator's public surface: start it, and the names its options and admin API use. */
export { ADMIN_PREFIX } from "./admin-routes.ts";
export { DEFAULT_TOKEN, parseTokenSpec, type TokenInput } from "./auth.ts";
export { EmulatorClock } from "./clock.ts";
export { EMULATOR_ENV } from "./defaults.ts";
export { type DroppedPerson, FaultRule, type FaultRuleInput, parseLatency } from "./faults.ts";
export { dropsPerson, importKey } from "./import-faults.ts";
export { DEFAULT_HOST, DEFAULT_PORT, EmulatorOptions, type EmulatorOptionsInput } from "./options.ts";
export {
  DEFAULT_RATE_LIMIT,
  parseRateLimit,
  RATE_LIMIT_RESET_UNITS,
  type RateLimitResetUnit,
} from "./rate-limiter.ts";
export { API_PREFIX } from "./routes/api-routes.ts";
export { DEFAULT_SEED, SeedSizes, type SeedSizesInput } from "./seed.ts";
export { type RunningEmulator, startEmulator } from "./server.ts";
export { PersonRecord } from "./store/records.ts";
export { Snapshot } from "./store/snapshot.ts";
export type { Store } from "./store/store.ts";

/**
 * The emulator's defaults, in a module without zod, fastify or any other
 * import, so that `recruit-sync emulator --help` can show them without loading
 * the emulator. options.ts, seed.ts and auth.ts re-export them.
 */

export const DEFAULT_PORT = 4010;
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_SEED = 1;
/** The token used when none is configured; it holds every permission. */
export const DEFAULT_TOKEN = "emulator-token";

/** Environment variables `recruit-sync emulator` reads when the matching flag is absent; empty counts as unset. */
export const EMULATOR_ENV = {
  /** Service tokens, `TOKEN[:PERM,…]` separated by spaces (for `--token`). */
  tokens: "RECRUIT_SYNC_EMULATOR_TOKENS",
  /** The admin API's token (for `--admin-token`). */
  adminToken: "RECRUIT_SYNC_EMULATOR_ADMIN_TOKEN",
} as const;

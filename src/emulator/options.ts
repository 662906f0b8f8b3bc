import { z } from "zod";
import { PERMISSIONS } from "../api/index.ts";
import { DEFAULT_HOST, DEFAULT_PORT } from "./defaults.ts";
import { FaultRule } from "./faults.ts";
import { DEFAULT_RATE_LIMIT, parseRateLimit, RATE_LIMIT_RESET_UNITS } from "./rate-limiter.ts";
import { DEFAULT_SEED, SeedSizes } from "./seed.ts";

export { DEFAULT_HOST, DEFAULT_PORT };

const RateLimitSpec = z.union([
  z.literal(false),
  z.string().transform((s, ctx) => {
    try {
      return parseRateLimit(s);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: err instanceof Error ? err.message : String(err) });
      return z.NEVER;
    }
  }),
  z.object({ requests: z.number().int().positive(), windowSeconds: z.number().positive() }).strict(),
]);

/** Options of startEmulator; every field has a default. */
export const EmulatorOptions = z
  .object({
    /** 0 picks a free port (tests). */
    port: z.number().int().min(0).max(65_535).default(0),
    host: z.string().default(DEFAULT_HOST),
    seed: z.number().int().default(DEFAULT_SEED),
    sizes: SeedSizes.partial().default({}),
    /**
     * `TOKEN[:PERM,…]` strings or objects; none means the single default token
     * with every permission on loopback, and a random one beyond loopback.
     */
    tokens: z
      .array(
        z.union([
          z.string().min(1),
          z
            .object({ token: z.string().min(1), permissions: z.array(z.enum(PERMISSIONS)).optional() })
            .strict(),
        ]),
      )
      .default([]),
    /** `REQUESTS/SECONDSs`, an object, or false for no limit. */
    rateLimit: RateLimitSpec.default(DEFAULT_RATE_LIMIT),
    resetUnit: z.enum(RATE_LIMIT_RESET_UNITS).default("delta-seconds"),
    faults: z.array(FaultRule).default([]),
    /** Serve /__emulator (the admin API). */
    admin: z.boolean().default(true),
    /**
     * The admin API's own token (`Authorization: Bearer …`), always required
     * when given; without one, a random token is made (see `adminToken` of
     * the running emulator) unless `openAdmin`.
     */
    adminToken: z.string().min(1).optional(),
    /**
     * Serve the admin API without a token (tests and scripts on this machine
     * only): refused beyond loopback (host not 127.0.0.0/8, ::1 or localhost),
     * and ignored when `adminToken` is given.
     */
    openAdmin: z.boolean().default(false),
    /** The default now (the admin token is always required unless `openAdmin`); kept for older callers. */
    requireAdminToken: z.boolean().optional(),
    /** Refuse seeds estimated above this many MB of heap; default 70% of V8's heap limit. */
    maxSeedMemoryMb: z.number().positive().optional(),
    /** Restore from this file at start when it exists; save to it on close. */
    stateFile: z.string().min(1).optional(),
    /** Start the emulator's clock at this time (ISO 8601 or epoch ms) instead of now. */
    clock: z.union([z.iso.datetime({ offset: true }), z.number()]).optional(),
  })
  .strict();
export type EmulatorOptionsInput = z.input<typeof EmulatorOptions>;
export type EmulatorOptions = z.infer<typeof EmulatorOptions>;

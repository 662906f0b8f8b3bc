import { z } from "zod";

export const RESET_UNIT_VALUES = ["auto", "delta-seconds", "epoch-seconds", "epoch-milliseconds"] as const;

/** The validated runtime configuration: config/*.yaml merged with the environment. */
export const RuntimeConfig = z
  .object({
    service: z
      .object({
        baseUrl: z.url({ protocol: /^https?$/ }),
        token: z.string().min(1).optional(),
        timeoutMs: z.number().int().positive().default(30_000),
        resetUnit: z.enum(RESET_UNIT_VALUES).default("auto"),
        retry: z
          .object({
            maxAttempts: z.number().int().min(1).default(5),
            baseDelayMs: z.number().int().min(0).default(250),
            maxDelayMs: z.number().int().min(0).default(30_000),
            maxRetryAfterMs: z.number().int().min(0).default(120_000),
          })
          .strict()
          .prefault({}),
      })
      .strict(),
    redis: z
      .object({
        url: z.string().regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL"),
        prefix: z.string().min(1),
      })
      .strict(),
    warehouse: z
      .object({
        url: z
          .string()
          .regex(/^(duckdb:|postgres(ql)?:\/\/|file:)/, "must be duckdb:PATH, postgres://… or file:DIR"),
      })
      .strict(),
    paths: z.object({ jobsDir: z.string().min(1), dataDir: z.string().min(1) }).strict(),
    log: z
      .object({
        level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
      })
      .strict()
      .prefault({}),
  })
  .strict();
export type RuntimeConfig = z.infer<typeof RuntimeConfig>;

import { z } from "zod";

/** How bad a rule's state is: critical wakes someone, warning waits for the morning. */
export const ALERT_SEVERITIES = ["critical", "warning", "info"] as const;
export type AlertSeverity = (typeof ALERT_SEVERITIES)[number];

const severity = (fallback: AlertSeverity) => z.enum(ALERT_SEVERITIES).default(fallback);
const ms = (fallback: number) => z.number().int().min(0).default(fallback);
const MINUTE = 60_000;

/** Every rule can be turned off and given its own severity; some have a threshold. */
const rule = <T extends z.ZodRawShape>(fallback: AlertSeverity, shape: T) =>
  z
    .object({ enabled: z.boolean().default(true), severity: severity(fallback), ...shape })
    .strict()
    // Every field of a rule has a default; TypeScript cannot see that through the generic shape.
    .prefault({} as never);

/** The rules (docs/ops.md, "Alerts"): each fires once when its state changes, and once when it clears. */
export const AlertRulesConfig = z
  .object({
    /** The latest run of a job failed for good (no attempt left, or not retryable); clears at its next success. */
    jobFailed: rule("critical", {}),
    /** The latest import of a job rejected more than this share of its rows (0–1); clears at one under it. */
    rejectedRows: rule("warning", { share: z.number().min(0).max(1).default(0.05) }),
    /**
     * A schedule in jobs/ has no success within its cron interval plus this
     * grace, counted from its last success (or from when it was first seen).
     */
    staleSchedule: rule("critical", { graceMs: ms(30 * MINUTE) }),
    /** The shared rate budget has been spent (or a queue held after 429s) longer than this. */
    budgetPaused: rule("warning", { limitMs: ms(30 * MINUTE) }),
    /** Redis lost its data (the fleet epoch changed); clears after this long without another loss. */
    redisDataLost: rule("critical", { clearAfterMs: ms(60 * MINUTE) }),
    /** A reconciliation of an import found more people missing from the service than this. */
    missingPeople: rule("warning", { atMost: z.number().int().min(0).default(0) }),
    /** A run has waited for a worker (queued, not delayed) longer than this. */
    waitingForWorker: rule("warning", { limitMs: ms(15 * MINUTE) }),
  })
  .strict()
  .prefault({});
export type AlertRulesConfig = z.infer<typeof AlertRulesConfig>;
export type AlertRuleName = keyof AlertRulesConfig;

const channelName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, "lowercase letters, digits, - and _ (it names delivery jobs)");
const httpUrl = z.url({ protocol: /^https?$/ });

/** Where alerts go. Secrets are never here: they come from the environment (see `secrets`). */
export const AlertChannelConfig = z.discriminatedUnion("kind", [
  z
    .object({
      kind: z.literal("webhook"),
      name: channelName,
      url: httpUrl,
      /** Only alerts of these severities (default all). */
      severities: z.array(z.enum(ALERT_SEVERITIES)).optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal("slack"),
      name: channelName,
      url: httpUrl,
      severities: z.array(z.enum(ALERT_SEVERITIES)).optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal("email"),
      name: channelName,
      host: z.string().min(1),
      port: z.number().int().min(1).max(65_535).default(587),
      /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
      secure: z.boolean().default(false),
      /** The SMTP user; the password comes from RECRUIT_SYNC_ALERTS_SMTP_PASSWORD. */
      user: z.string().min(1).optional(),
      from: z.string().min(3),
      to: z.array(z.string().min(3)).min(1),
      severities: z.array(z.enum(ALERT_SEVERITIES)).optional(),
    })
    .strict(),
]);
export type AlertChannelConfig = z.infer<typeof AlertChannelConfig>;

/** `alerts:` in config/*.yaml. */
export const AlertsConfig = z
  .object({
    channels: z
      .array(AlertChannelConfig)
      .default([])
      .refine((list) => new Set(list.map((c) => c.name)).size === list.length, {
        message: "two channels have the same name",
      }),
    rules: AlertRulesConfig,
    /** How often the rules are evaluated (by one process of the fleet at a time). */
    evaluateEveryMs: z.number().int().min(100).default(30_000),
    /** Delivery through the `alerts` queue: attempts per channel, backoff doubling from backoffMs. */
    delivery: z
      .object({
        attempts: z.number().int().min(1).default(8),
        backoffMs: z.number().int().min(0).default(5000),
        timeoutMs: z.number().int().min(100).default(10_000),
      })
      .strict()
      .prefault({}),
    /** From the environment only: RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET, RECRUIT_SYNC_ALERTS_SMTP_PASSWORD. */
    secrets: z
      .object({
        webhook: z
          .string()
          .min(16, "RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET must be at least 16 characters")
          .optional(),
        smtpPassword: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .refine((a) => !a.channels.some((c) => c.kind === "webhook") || a.secrets.webhook !== undefined, {
    path: ["secrets", "webhook"],
    message:
      "a webhook channel signs its alerts: set RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET (at least 16 characters)",
  })
  .prefault({});
export type AlertsConfig = z.infer<typeof AlertsConfig>;

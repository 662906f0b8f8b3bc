import { z } from "zod";
import { ALERT_SEVERITIES } from "../config/index.ts";

export const ALERT_RULES = [
  "jobFailed",
  "rejectedRows",
  "staleSchedule",
  "budgetPaused",
  "redisDataLost",
  "missingPeople",
  "waitingForWorker",
  "test",
] as const;
export type AlertRule = (typeof ALERT_RULES)[number];

/**
 * A fact an alert carries: a job's name, a count, a code, a time. Never a
 * person's data: alerts are built from queue states and counts only, and
 * strings are limited to the shapes those take.
 */
export const AlertFact = z.union([z.string().max(200), z.number(), z.boolean(), z.null()]);

/**
 * One state change of one rule for one subject: what every channel is sent.
 * `id` is the same for every delivery of one change (a receiver dedupes on it).
 */
export const AlertEvent = z
  .object({
    id: z.string().regex(/^alert-[a-zA-Z0-9_-]+$/),
    rule: z.enum(ALERT_RULES),
    /** What the rule is about: a job's name, a queue, the Redis prefix. */
    subject: z.string().max(200),
    /** firing: the state began; resolved: it cleared (the recovery notice). */
    state: z.enum(["firing", "resolved"]),
    severity: z.enum(ALERT_SEVERITIES),
    /** One line for people. */
    title: z.string().max(300),
    facts: z.record(z.string(), AlertFact),
    /** When the change was decided. */
    at: z.string(),
    /** Number of this change for this rule and subject (1 the first firing, 2 its recovery, …). */
    seq: z.number().int().min(0),
    /** The prefix of the fleet it came from, so one receiver can serve several deployments. */
    source: z.string().max(200),
  })
  .strict();
export type AlertEvent = z.infer<typeof AlertEvent>;

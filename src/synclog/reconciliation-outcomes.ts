import type { Redis } from "ioredis";
import { z } from "zod";

/** Where the latest outcome of each check is kept, under the configured prefix; the alert rules read it. */
const outcomesKey = (prefix: string) => `${prefix}:alerts:reconciliation`;

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The outcome of one reconciliation of an import job: counts only, never who. */
export const ReconciliationOutcome = z
  .object({
    job: z.string().min(1).max(200),
    /** People the run sent that the service does not have. */
    missing: z.number().int().min(0),
    /** People checked. */
    checked: z.number().int().min(0),
    /** When the reconciliation ran. */
    at: z.string(),
  })
  .strict();
export type ReconciliationOutcome = z.infer<typeof ReconciliationOutcome>;

/**
 * The hook of the `missingPeople` rule: a reconciliation (checking that the
 * people an import sent are in the service) reports its counts here; the
 * next evaluation fires when `missing` is above `alerts.rules.missingPeople.atMost`
 * and clears when a later reconciliation of the job finds everyone. Only
 * the latest outcome per job is kept.
 */
export async function reportReconciliation(
  redis: Redis,
  prefix: string,
  outcome: ReconciliationOutcome,
): Promise<void> {
  const parsed = ReconciliationOutcome.parse(outcome);
  await redis.hset(outcomesKey(prefix), parsed.job, JSON.stringify(parsed));
}

/** The latest reconciliation of every job. */
export async function readReconciliations(redis: Redis, prefix: string): Promise<ReconciliationOutcome[]> {
  const all = await redis.hgetall(outcomesKey(prefix));
  return Object.values(all).flatMap((text) => {
    const parsed = ReconciliationOutcome.safeParse(jsonOf(text));
    return parsed.success ? [parsed.data] : [];
  });
}

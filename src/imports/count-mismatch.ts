import { z } from "zod";

/**
 * A request whose answer counted other than the people it carried: the
 * service said 200 and gave an import id, yet its `count` says some people
 * may not have landed (or more did than were sent). Its people are marked
 * unverified (unverified-people.ts) for the next read-back check.
 */
export const CountMismatch = z.object({
  /** The batch's index in the run (0-based, as the ledger numbers it). */
  batch: z.number().int().min(0),
  importId: z.string(),
  /** People the request carried. */
  sent: z.number().int().min(0),
  /** The answer's `count`. */
  counted: z.number().int(),
});
export type CountMismatch = z.infer<typeof CountMismatch>;

/** The report's warning line of one mismatch: batch and import id, never a person. */
export function countMismatchWarning(m: CountMismatch): string {
  return `batch ${m.batch}: the service counted ${m.counted} of the ${m.sent} people sent (import ${m.importId}); they are marked unverified until a participants export checks them`;
}

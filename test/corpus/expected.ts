import { z } from "zod";

/**
 * A corpus file's hand count (<name>.expected.json beside it): the people a
 * careful person would import from it with the best identifier, and why.
 * Read by scripts/corpus-report.ts and test/corpus/corpus.test.ts.
 */
export const Expected = z.object({
  study: z.string(),
  identifier: z.enum(["email", "phone"]),
  importable: z.number().int().nonnegative(),
  why: z.string(),
  /**
   * Files with a consent column: over the people the hand count imports, how
   * many its values say are opted out, not opted out, or say nothing; and
   * which values say which (test/corpus/corpus.test.ts checks each person).
   */
  consent: z
    .object({
      column: z.string(),
      optedOut: z.number().int().nonnegative(),
      notOptedOut: z.number().int().nonnegative(),
      unstated: z.number().int().nonnegative(),
      optedOutValues: z.array(z.string()).min(1),
      notOptedOutValues: z.array(z.string()).min(1),
    })
    .strict()
    .optional(),
});

export type Expected = z.infer<typeof Expected>;

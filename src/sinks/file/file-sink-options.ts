import { z } from "zod";

/**
 * What a `file:` warehouse URL may say after `?`, e.g.
 * `file:./lake?escapeFormulas=false`. Values are text, as in any URL query.
 */
export const FileSinkOptions = z.strictObject({
  /** Prefix cells a spreadsheet would run as formulas with `'` in the CSV parts; false for machine readers. */
  escapeFormulas: z
    .stringbool({ truthy: ["true"], falsy: ["false"], error: "expected true or false" })
    .default(true),
});
export type FileSinkOptions = z.output<typeof FileSinkOptions>;

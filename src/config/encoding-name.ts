import { z } from "zod";
import { ENCODINGS } from "./job-names.ts";

/** An encoding by name, as `source.encoding`, `--encoding` and a queued import's data take it. */
export const EncodingName = z.enum(ENCODINGS, {
  error: (issue) =>
    `unknown encoding ${JSON.stringify(issue.input)}: expected one of ${ENCODINGS.join(", ")}`,
});
export type EncodingName = z.infer<typeof EncodingName>;

import { z } from "zod";
import { Id, PageInfoRequest } from "./common.ts";

/** Segment (spec 2.11). */
export const Segment = z.looseObject({
  segmentId: Id.describe("The segment."),
  name: z.string().describe("Its name."),
});
export type Segment = z.infer<typeof Segment>;

/** POST /segments/search body (spec 4.13): filtering is not supported. */
export const SearchSegmentsBody = z.object({ pageInfo: PageInfoRequest.optional() }).strict();
export type SearchSegmentsBody = z.infer<typeof SearchSegmentsBody>;

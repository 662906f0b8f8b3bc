import { z } from "zod";
import { SPEC_DEFAULTS } from "../decisions.ts";

/** Calendar date, YYYY-MM-DD, and a real day of the calendar. */
export const DateString = z.iso.date();
/** ISO 8601 timestamp; the service sends UTC, we accept any offset. */
export const DateTimeString = z.iso.datetime({ offset: true });
export const Id = z.string().min(1);

/** The paging envelope of every paged response (spec 2.12). */
export const PageInfoResponse = z.looseObject({
  hasNextPage: z.boolean(),
  hasPreviousPage: z.boolean(),
  startCursor: z.string().nullable().optional(),
  endCursor: z.string().nullable().optional(),
});
export type PageInfoResponse = z.infer<typeof PageInfoResponse>;

export function pagedResponse<T extends z.ZodType>(item: T) {
  return z.looseObject({
    results: z.array(item),
    total: z.number().int().nonnegative(),
    pageInfo: PageInfoResponse,
  });
}
export interface Page<T> {
  results: T[];
  total: number;
  pageInfo: PageInfoResponse;
}

/**
 * pageInfo of a search body: size, and the previous response's endCursor as the
 * start cursor (spec 4.13). The cursor's key is not shown; ours is
 * `startCursor`, and `cursor`, `after` and `endCursor` are accepted as aliases.
 */
export const PageInfoRequest = z
  .object({
    size: z.number().int().min(1).max(SPEC_DEFAULTS.maxSearchPageSize).optional(),
    startCursor: z.string().optional(),
    cursor: z.string().optional(),
    after: z.string().optional(),
    endCursor: z.string().optional(),
  })
  .strict();
export type PageInfoRequest = z.infer<typeof PageInfoRequest>;

/** The cursor a search body carries, whichever alias the caller used. */
export function requestCursor(pageInfo: PageInfoRequest | undefined): string | undefined {
  return pageInfo?.startCursor ?? pageInfo?.cursor ?? pageInfo?.after ?? pageInfo?.endCursor;
}

/** 400 body when schema validation fails (spec 7). */
export const ValidationErrorItem = z.looseObject({
  message: z.string(),
  path: z.array(z.union([z.string(), z.number()])),
});
export type ValidationErrorItem = z.infer<typeof ValidationErrorItem>;
export const ValidationErrorBody = z.looseObject({ errors: z.array(ValidationErrorItem) });
export type ValidationErrorBody = z.infer<typeof ValidationErrorBody>;

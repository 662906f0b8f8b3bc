import { SPEC_DEFAULTS } from "../api/index.ts";
import { validationFailed } from "./http-error.ts";

/** Cursors are opaque to clients; inside they are the offset of the next record. */
export function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString("base64url");
}

export function decodeCursor(cursor: string | undefined, path: (string | number)[]): number {
  if (cursor === undefined || cursor === "") return 0;
  const m = /^o:(\d+)$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!m) throw validationFailed([{ message: "Invalid cursor", path }]);
  return Number(m[1]);
}

export type PageEnvelope<R> = {
  results: R[];
  total: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
};

/**
 * One page of `items` from `offset`. endCursor is where the next page starts,
 * so passing it back as the start cursor continues without overlap (spec 4.13).
 */
export function pageOf<T, R>(
  items: readonly T[],
  offset: number,
  size: number | undefined,
  view: (item: T) => R,
): PageEnvelope<R> {
  const n = size ?? SPEC_DEFAULTS.defaultPageSize;
  const start = Math.min(offset, items.length);
  const end = Math.min(start + n, items.length);
  const results: R[] = new Array(end - start);
  for (let i = start; i < end; i++) results[i - start] = view(items[i] as T);
  return {
    results,
    total: items.length,
    pageInfo: {
      hasNextPage: end < items.length,
      hasPreviousPage: start > 0,
      startCursor: encodeCursor(start),
      endCursor: encodeCursor(end),
    },
  };
}

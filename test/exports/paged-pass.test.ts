import { describe, expect, it } from "vitest";
import type { Page } from "../../src/api/index.ts";
import { nextCursor, shrankBelow } from "../../src/exports/paged-pass.ts";

function page(
  results: number,
  total: number,
  pageInfo: Partial<Page<number>["pageInfo"]> = {},
): Page<number> {
  return {
    results: Array.from({ length: results }, (_, i) => i),
    total,
    pageInfo: { hasNextPage: true, hasPreviousPage: false, endCursor: "next", ...pageInfo },
  };
}

describe("the pass engine's page rules", () => {
  it("follows endCursor while there is a next page, a cursor to it and records on this one", () => {
    expect(nextCursor(page(10, 30))).toBe("next");
    expect(nextCursor(page(10, 30, { hasNextPage: false }))).toBeNull();
    expect(nextCursor(page(10, 30, { endCursor: null }))).toBeNull();
    expect(nextCursor(page(10, 30, { endCursor: undefined }))).toBeNull();
    expect(nextCursor(page(0, 30))).toBeNull();
  });

  it("sees a shrink only against the total of the pass's first page", () => {
    expect(shrankBelow({ cursor: null, total: null }, page(10, 5))).toBe(false);
    expect(shrankBelow({ cursor: "c", total: 30 }, page(10, 30))).toBe(false);
    expect(shrankBelow({ cursor: "c", total: 30 }, page(10, 31))).toBe(false);
    expect(shrankBelow({ cursor: "c", total: 30 }, page(10, 29))).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import { detectResetUnit, parseRateLimitHeaders, parseRetryAfter } from "../../src/api/index.ts";

const h = (o: Record<string, string>) => new Headers(o);
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

describe("X-RateLimit-Reset unit detection", () => {
  it("reads a small value as seconds until reset", () => {
    expect(detectResetUnit(0)).toBe("delta-seconds");
    expect(detectResetUnit(60)).toBe("delta-seconds");
    expect(detectResetUnit(86_400)).toBe("delta-seconds");
  });
  it("reads a value past ten years of seconds as epoch seconds", () => {
    expect(detectResetUnit(Math.floor(NOW / 1000))).toBe("epoch-seconds");
  });
  it("reads a value of 10^12 and more as epoch milliseconds", () => {
    expect(detectResetUnit(NOW)).toBe("epoch-milliseconds");
  });

  it("turns each unit into the same instant", () => {
    const expected = NOW + 42_000;
    const base = { "x-ratelimit-limit": "100", "x-ratelimit-remaining": "3" };
    expect(parseRateLimitHeaders(h({ ...base, "x-ratelimit-reset": "42" }), "auto", NOW)?.resetAt).toBe(
      expected,
    );
    expect(
      parseRateLimitHeaders(h({ ...base, "x-ratelimit-reset": String(expected / 1000) }), "auto", NOW)
        ?.resetAt,
    ).toBe(expected);
    expect(
      parseRateLimitHeaders(h({ ...base, "x-ratelimit-reset": String(expected) }), "auto", NOW)?.resetAt,
    ).toBe(expected);
  });

  it("obeys a configured unit over detection", () => {
    const headers = h({
      "x-ratelimit-limit": "1",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": "1000000000",
    });
    expect(parseRateLimitHeaders(headers, "delta-seconds", NOW)?.resetAt).toBe(NOW + 1e12);
  });

  it("returns undefined when a header is missing or not a number", () => {
    expect(
      parseRateLimitHeaders(h({ "x-ratelimit-limit": "1", "x-ratelimit-remaining": "0" })),
    ).toBeUndefined();
    expect(
      parseRateLimitHeaders(
        h({ "x-ratelimit-limit": "x", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1" }),
      ),
    ).toBeUndefined();
  });
});

describe("Retry-After", () => {
  it("reads delta seconds", () => {
    expect(parseRetryAfter("120", NOW)).toBe(120_000);
    expect(parseRetryAfter("0", NOW)).toBe(0);
    expect(parseRetryAfter("1.5", NOW)).toBe(1500);
  });
  it("reads an HTTP date", () => {
    expect(parseRetryAfter(new Date(NOW + 90_000).toUTCString(), NOW)).toBe(90_000);
  });
  it("treats a date in the past as no wait", () => {
    expect(parseRetryAfter(new Date(NOW - 5000).toUTCString(), NOW)).toBe(0);
  });
  it("ignores garbage", () => {
    expect(parseRetryAfter("soon", NOW)).toBeUndefined();
    expect(parseRetryAfter(null, NOW)).toBeUndefined();
    expect(parseRetryAfter("-3", NOW)).toBeUndefined();
  });
});

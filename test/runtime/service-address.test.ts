import { describe, expect, it } from "vitest";
import type { ResponseContext } from "../../src/api/index.ts";
import { ConfigError, ServiceAddressError } from "../../src/errors/index.ts";
import { checkServiceBaseUrl, serviceAddressCheck } from "../../src/runtime/index.ts";

const response = (operationId: ResponseContext["operationId"], status: number): ResponseContext => ({
  operationId,
  status,
  attempt: 1,
  rateLimit: undefined,
  retryAfterMs: undefined,
});

describe("checkServiceBaseUrl", () => {
  it("accepts a base URL ending in /api/public/v1, with or without a trailing slash", () => {
    expect(() => checkServiceBaseUrl("https://svc.example/api/public/v1")).not.toThrow();
    expect(() => checkServiceBaseUrl("https://svc.example/proxy/api/public/v1/")).not.toThrow();
  });

  it("refuses one without it, naming the URL to use", () => {
    expect(() => checkServiceBaseUrl("https://svc.example/")).toThrow(ConfigError);
    expect(() => checkServiceBaseUrl("https://svc.example/api/public")).toThrow(
      "the service's base URL https://svc.example/api/public lacks /api/public/v1: set RECRUIT_SYNC_BASE_URL (or service.baseUrl, or --base-url) to https://svc.example/api/public/api/public/v1",
    );
  });
});

describe("serviceAddressCheck", () => {
  const base = "https://svc.example/api/public/v1";

  it("turns a 404 from a call that addresses no record into a ServiceAddressError", async () => {
    const check = serviceAddressCheck(base);
    await expect(check(response("searchSegments", 404))).rejects.toThrow(ServiceAddressError);
    await expect(check(response("searchSegments", 404))).rejects.toThrow(
      /answered 404 to searchSegments \(POST \/segments\/search\)/,
    );
  });

  it("leaves a 404 that can mean a missing record to the caller", async () => {
    const check = serviceAddressCheck(base);
    // A path parameter, a 404 in the contract, or a record named in the body (studyId).
    for (const op of ["getIncentive", "searchParticipants", "searchEmails", "deleteProperties"] as const) {
      await expect(check(response(op, 404)), op).resolves.toBeUndefined();
    }
    await expect(check(response("searchSegments", 200))).resolves.toBeUndefined();
  });

  it("hands every response to the hook it wraps first, the failing one too", async () => {
    const seen: number[] = [];
    const check = serviceAddressCheck(base, (ctx) => {
      seen.push(ctx.status);
    });
    await check(response("searchSegments", 200));
    await check(response("searchSegments", 404)).catch(() => {});
    expect(seen).toEqual([200, 404]);
  });
});

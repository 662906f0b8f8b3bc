import { afterEach, describe, expect, it } from "vitest";
import {
  ApiError,
  createClient,
  NotFoundApiError,
  RateLimitedApiError,
  type ResponseContext,
  UnexpectedResponseError,
  ValidationApiError,
} from "../../src/api/index.ts";
import { sendJson, sendText, startTestServer, type TestServer } from "../helpers/http-server.ts";

const segmentsPage = (ids: string[], next?: string) => ({
  results: ids.map((segmentId) => ({ segmentId, name: `Segment ${segmentId}` })),
  total: 10,
  pageInfo: {
    hasNextPage: next !== undefined,
    hasPreviousPage: false,
    startCursor: "s",
    endCursor: next ?? "end",
  },
});
const incentive = {
  incentiveId: "inc_1",
  type: "MONEY_OR_GIFT_CARD",
  amountCents: 5000,
  sentAt: "2026-03-01T10:00:00Z",
  recipientEmail: "a@example.com",
  status: "UNCLAIMED",
};

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A client whose waits are recorded instead of slept, so retry spacing is checked exactly. */
function clientFor(s: TestServer, extra: Partial<Parameters<typeof createClient>[0]> = {}) {
  const waits: number[] = [];
  const seen: ResponseContext[] = [];
  const client = createClient({
    baseUrl: s.baseUrl,
    token: "secret-token",
    random: () => 0,
    sleep: async (ms) => {
      waits.push(ms);
    },
    onResponse: (ctx) => {
      seen.push(ctx);
    },
    ...extra,
  });
  return { client, waits, seen };
}

describe("the typed client", () => {
  it("sends the bearer token, the JSON body and the base URL's path prefix", async () => {
    server = await startTestServer((_req, res) =>
      sendJson(res, 200, { message: "ok", count: 1, importId: "imp_1" }),
    );
    const { client } = clientFor(server);
    const result = await client.importParticipants("study 1", { people: [{ email: "a@example.com" }] });
    expect(result).toEqual({ message: "ok", count: 1, importId: "imp_1" });
    const req = server.requests[0]!;
    expect(req.method).toBe("POST");
    expect(req.url).toBe("/api/public/v1/studies/study%201/participants/import");
    expect(req.headers.authorization).toBe("Bearer secret-token");
    expect(JSON.parse(req.body)).toEqual({ people: [{ email: "a@example.com" }], identifier: "email" });
  });

  it("refuses to send a body that breaks the contract", async () => {
    server = await startTestServer((_req, res) => sendJson(res, 200, {}));
    const { client } = clientFor(server);
    const err = await client.replaceScreener("s1", { questions: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("bad_request");
    expect(server.requests).toHaveLength(0);
  });

  it.each([".", "..", ""])(
    "refuses the id %j before any request: it would reach another path",
    async (id) => {
      server = await startTestServer((_req, res) => sendJson(res, 200, {}));
      const { client } = clientFor(server);
      const err = await client.getScreener(id).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe("bad_request");
      expect((err as ApiError).message).toContain("is not an id");
      expect(server.requests).toHaveLength(0);
    },
  );

  it("puts the property-group cursor and page size in the query", async () => {
    server = await startTestServer((_req, res) =>
      sendJson(res, 200, { results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false } }),
    );
    const { client } = clientFor(server);
    await client.listPropertyGroupProperties("pg_1", { cursor: "abc", pageSize: 100 });
    expect(server.requests[0]!.url).toBe(
      "/api/public/v1/property-groups/pg_1/properties?cursor=abc&pageSize=100",
    );
  });

  it("reports a 2xx whose body breaks the contract as unexpected_response", async () => {
    server = await startTestServer((_req, res) => sendJson(res, 200, { ...incentive, amountCents: "fifty" }));
    const { client } = clientFor(server);
    const err = await client.getIncentive("x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as UnexpectedResponseError).code).toBe("unexpected_response");
  });

  it("accepts an incentive type or status outside the spec's lists: one odd record must not fail an export", async () => {
    server = await startTestServer((_req, res) =>
      sendJson(res, 200, { ...incentive, type: "CHARITY", status: "PENDING" }),
    );
    const { client } = clientFor(server);
    expect(await client.getIncentive("inc_1")).toMatchObject({ type: "CHARITY", status: "PENDING" });
  });

  it("accepts unknown extra fields in responses", async () => {
    server = await startTestServer((_req, res) => sendJson(res, 200, { ...incentive, newField: 1 }));
    const { client } = clientFor(server);
    expect((await client.getIncentive("inc_1")).incentiveId).toBe("inc_1");
  });
});

describe("error bodies (spec 7)", () => {
  const cases: [number, string, string, Record<string, unknown>][] = [
    [400, "text/plain", "Bad Request", { code: "bad_request" }],
    [401, "text/plain", "Unauthorized", { code: "unauthorized" }],
    [403, "text/plain", "Forbidden", { code: "forbidden" }],
    [404, "text/plain", "Incentive not found", { code: "not_found", resource: "Incentive" }],
    [409, "text/plain", "Study is not in draft status", { code: "conflict" }],
    [500, "text/plain", "Internal Server Error", { code: "server_error", retryable: true }],
    [418, "text/plain", "teapot", { code: "http_error" }],
  ];
  for (const [status, type, body, expected] of cases) {
    it(`maps ${status} ${body} to ${expected.code}`, async () => {
      server = await startTestServer((_req, res) => {
        res.writeHead(status, { "content-type": type });
        res.end(body);
      });
      const { client } = clientFor(server, { retry: { maxAttempts: 1 } });
      const err = (await client.getIncentive("inc_9").catch((e: unknown) => e)) as ApiError;
      expect(err).toBeInstanceOf(ApiError);
      expect(err.status).toBe(status);
      expect(err).toMatchObject(expected);
      expect(err.message).not.toContain("secret-token");
    });
  }

  it("maps a 400 JSON body to a validation error with every path", async () => {
    const errors = [
      { message: "Invalid email", path: ["people", 2, "email"] },
      { message: "Required", path: ["people", 5, "phone"] },
    ];
    server = await startTestServer((_req, res) => sendJson(res, 400, { errors }));
    const { client } = clientFor(server);
    const err = (await client
      .importParticipants("s1", { people: [{ email: "a@example.com" }] })
      .catch((e: unknown) => e)) as ValidationApiError;
    expect(err).toBeInstanceOf(ValidationApiError);
    expect(err.code).toBe("validation_failed");
    expect(err.errors).toEqual(errors);
    expect(err.message).toBe(
      "importParticipants: the service refused the request at people.2.email: Invalid email",
    );
    expect(server.requests).toHaveLength(1);
  });

  it("names the missing resource of a 404", async () => {
    server = await startTestServer((_req, res) => sendText(res, 404, "Property group not found"));
    const { client } = clientFor(server);
    const err = (await client
      .listPropertyGroupProperties("pg_x")
      .catch((e: unknown) => e)) as NotFoundApiError;
    expect(err).toBeInstanceOf(NotFoundApiError);
    expect(err.resource).toBe("Property group");
  });
});

describe("retries", () => {
  it("retries a 500 with exponential backoff and then succeeds", async () => {
    server = await startTestServer((_req, res, i) =>
      i < 3 ? sendText(res, 500, "Internal Server Error") : sendJson(res, 200, incentive),
    );
    const { client, waits } = clientFor(server, {
      random: () => 1,
      retry: { baseDelayMs: 100, maxDelayMs: 250, maxAttempts: 5 },
    });
    expect((await client.getIncentive("inc_1")).incentiveId).toBe("inc_1");
    expect(server.requests).toHaveLength(4);
    expect(waits).toEqual([100, 200, 250]);
  });

  it("gives up after maxAttempts with the last error", async () => {
    server = await startTestServer((_req, res) => sendText(res, 503, "Service Unavailable"));
    const { client } = clientFor(server, { retry: { maxAttempts: 3 } });
    const err = (await client.getIncentive("inc_1").catch((e: unknown) => e)) as ApiError;
    expect(err.code).toBe("server_error");
    expect(server.requests).toHaveLength(3);
  });

  it("does not resend a question append after a 500, because it is not idempotent", async () => {
    server = await startTestServer((_req, res) => sendText(res, 500, "Internal Server Error"));
    const { client } = clientFor(server);
    const err = (await client
      .createScreenerQuestion("s1", { category: "simple", type: "SHORT_FORM", name: "q" })
      .catch((e: unknown) => e)) as ApiError;
    expect(err.code).toBe("server_error");
    expect(server.requests).toHaveLength(1);
  });

  it("does resend a question append after a 429: the service refused before acting", async () => {
    server = await startTestServer((_req, res, i) =>
      i === 0
        ? sendText(res, 429, "Too Many Requests", { "retry-after": "1" })
        : sendJson(res, 200, {
            id: "q1",
            workspaceId: "w",
            isRequired: true,
            category: "simple",
            type: "SHORT_FORM",
            name: "q",
          }),
    );
    const { client, waits } = clientFor(server);
    await client.createScreenerQuestion("s1", { category: "simple", type: "SHORT_FORM", name: "q" });
    expect(server.requests).toHaveLength(2);
    expect(waits).toEqual([1000]);
  });

  it("does not retry 4xx answers other than 429", async () => {
    server = await startTestServer((_req, res) => sendText(res, 409, "Study is not in draft status"));
    const { client } = clientFor(server);
    await expect(client.getScreener("s1")).rejects.toMatchObject({ code: "conflict" });
    expect(server.requests).toHaveLength(1);
  });

  it("waits Retry-After given in seconds", async () => {
    server = await startTestServer((_req, res, i) =>
      i === 0
        ? sendText(res, 429, "Too Many Requests", { "retry-after": "7" })
        : sendJson(res, 200, incentive),
    );
    const { client, waits, seen } = clientFor(server);
    await client.getIncentive("inc_1");
    expect(waits).toEqual([7000]);
    expect(seen[0]).toMatchObject({ status: 429, retryAfterMs: 7000 });
  });

  it("waits Retry-After given as an HTTP date", async () => {
    server = await startTestServer((_req, res, i) =>
      i === 0
        ? sendText(res, 429, "Too Many Requests", {
            "retry-after": new Date(Date.now() + 20_000).toUTCString(),
          })
        : sendJson(res, 200, incentive),
    );
    const { client, waits } = clientFor(server);
    await client.getIncentive("inc_1");
    expect(waits).toHaveLength(1);
    // An HTTP date has whole seconds, so the wait lies within a second below 20 s.
    expect(waits[0]).toBeGreaterThan(18_000);
    expect(waits[0]).toBeLessThanOrEqual(20_000);
  });

  it("fails as rate_limited without waiting when Retry-After exceeds the in-process cap", async () => {
    server = await startTestServer((_req, res) =>
      sendText(res, 429, "Too Many Requests", { "retry-after": "3600" }),
    );
    const { client, waits } = clientFor(server);
    const err = (await client.getIncentive("inc_1").catch((e: unknown) => e)) as RateLimitedApiError;
    expect(err).toBeInstanceOf(RateLimitedApiError);
    expect(err.retryAfterMs).toBe(3_600_000);
    expect(err.retryable).toBe(true);
    expect(waits).toEqual([]);
  });

  it("retries a refused connection for any operation", async () => {
    server = await startTestServer(() => {});
    const baseUrl = server.baseUrl;
    await server.close();
    server = undefined;
    const waits: number[] = [];
    const client = createClient({
      baseUrl,
      token: "t",
      retry: { maxAttempts: 3 },
      random: () => 0,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const err = (await client
      .createScreenerQuestion("s1", { category: "simple", type: "SHORT_FORM", name: "q" })
      .catch((e: unknown) => e)) as ApiError;
    expect(err.code).toBe("network_error");
    expect(err.message).toContain("ECONNREFUSED");
    expect(waits).toHaveLength(2);
  });
});

describe("timeouts", () => {
  it("abandons an attempt that gets no answer within timeoutMs and retries it", async () => {
    server = await startTestServer((_req, res, i) => {
      if (i === 0) return; // never answers
      sendJson(res, 200, incentive);
    });
    const { client } = clientFor(server, { timeoutMs: 200 });
    expect((await client.getIncentive("inc_1")).incentiveId).toBe("inc_1");
    expect(server.requests).toHaveLength(2);
  });

  it("reports timeout when every attempt hangs", async () => {
    server = await startTestServer(() => {});
    const { client } = clientFor(server, { timeoutMs: 100, retry: { maxAttempts: 2 } });
    const err = (await client.getIncentive("inc_1").catch((e: unknown) => e)) as ApiError;
    expect(err.code).toBe("timeout");
    expect(server.requests).toHaveLength(2);
  });

  it("abandons an attempt whose body stops halfway, as a timeout", async () => {
    server = await startTestServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"incentiveId":');
    });
    const { client } = clientFor(server, { timeoutMs: 100, retry: { maxAttempts: 2 } });
    const err = (await client.getIncentive("inc_1").catch((e: unknown) => e)) as ApiError;
    expect(err.code).toBe("timeout");
    expect(server.requests).toHaveLength(2);
  });

  it("stops at once when the caller aborts", async () => {
    server = await startTestServer(() => {});
    const { client } = clientFor(server, { timeoutMs: 10_000 });
    const ac = new AbortController();
    const p = client.getIncentive("inc_1", { signal: ac.signal });
    setTimeout(() => ac.abort(new Error("shutting down")), 50);
    await expect(p).rejects.toThrow("shutting down");
    expect(server.requests).toHaveLength(1);
  });
});

describe("rate-limit headers reach the hook", () => {
  it("passes {limit, remaining, resetAt} of every response, errors included", async () => {
    server = await startTestServer((_req, res, i) => {
      const headers = {
        "x-ratelimit-limit": "600",
        "x-ratelimit-remaining": String(599 - i),
        "x-ratelimit-reset": "30",
      };
      if (i === 0) sendText(res, 500, "Internal Server Error", headers);
      else sendJson(res, 200, incentive, headers);
    });
    const { client, seen } = clientFor(server);
    const before = Date.now();
    await client.getIncentive("inc_1");
    expect(seen.map((s) => s.status)).toEqual([500, 200]);
    expect(seen[1]!.rateLimit).toMatchObject({ limit: 600, remaining: 598, resetUnit: "delta-seconds" });
    expect(seen[1]!.rateLimit!.resetAt).toBeGreaterThanOrEqual(before + 30_000);
  });

  it("reads the reset as configured when the unit is fixed", async () => {
    server = await startTestServer((_req, res) =>
      sendJson(res, 200, incentive, {
        "x-ratelimit-limit": "10",
        "x-ratelimit-remaining": "9",
        "x-ratelimit-reset": "5",
      }),
    );
    const { client, seen } = clientFor(server, { resetUnit: "epoch-seconds" });
    await client.getIncentive("inc_1");
    expect(seen[0]!.rateLimit).toMatchObject({ resetAt: 5000, resetUnit: "epoch-seconds" });
  });

  it("awaits beforeRequest before every attempt", async () => {
    server = await startTestServer((_req, res, i) =>
      i === 0 ? sendText(res, 500, "Internal Server Error") : sendJson(res, 200, incentive),
    );
    const calls: string[] = [];
    const { client } = clientFor(server, {
      beforeRequest: async (op) => {
        calls.push(op);
      },
    });
    await client.getIncentive("inc_1");
    expect(calls).toEqual(["getIncentive", "getIncentive"]);
  });
});

describe("paging", () => {
  it("follows endCursor through many pages to the end", async () => {
    const pages = 12;
    server = await startTestServer((req, res) => {
      const body = JSON.parse(req.body) as { pageInfo: { startCursor?: string; size?: number } };
      const n = body.pageInfo.startCursor ? Number(body.pageInfo.startCursor.slice(1)) : 0;
      const ids = Array.from({ length: body.pageInfo.size ?? 25 }, (_, i) => `seg_${n}_${i}`);
      sendJson(res, 200, segmentsPage(ids, n + 1 < pages ? `c${n + 1}` : undefined));
    });
    const { client } = clientFor(server);
    const ids: string[] = [];
    for await (const page of client.segmentPages({ pageSize: 3 }))
      ids.push(...page.results.map((r) => r.segmentId));
    expect(ids).toHaveLength(pages * 3);
    expect(new Set(ids).size).toBe(pages * 3);
    expect(server.requests.map((r) => JSON.parse(r.body).pageInfo.startCursor)).toEqual([
      undefined,
      ...Array.from({ length: pages - 1 }, (_, i) => `c${i + 1}`),
    ]);
  });

  it("pages participants and property groups with their own cursor carriers", async () => {
    server = await startTestServer((req, res) => {
      if (req.url.startsWith("/api/public/v1/property-groups")) {
        const url = new URL(req.url, "http://x");
        const cursor = url.searchParams.get("cursor");
        const prop = (id: string) => ({ propertyId: id, name: id, propertyType: "STRING", isUnique: false });
        return sendJson(res, 200, {
          results: [prop(cursor ? "p2" : "p1")],
          total: 2,
          pageInfo: { hasNextPage: !cursor, hasPreviousPage: false, endCursor: cursor ? "z" : "next" },
        });
      }
      const body = JSON.parse(req.body) as { pageInfo: { startCursor?: string } };
      const p = (id: string) => ({ participantId: id, personId: `per_${id}`, studyId: "s1" });
      return sendJson(res, 200, {
        results: body.pageInfo.startCursor ? [p("b")] : [p("a")],
        total: 2,
        pageInfo: { hasNextPage: !body.pageInfo.startCursor, hasPreviousPage: false, endCursor: "after-a" },
      });
    });
    const { client } = clientFor(server);
    const participants: string[] = [];
    for await (const p of client.participants("s1")) participants.push(p.participantId);
    expect(participants).toEqual(["a", "b"]);
    const props: string[] = [];
    for await (const page of client.propertyGroupPages("pg_1", { pageSize: 1 })) {
      props.push(...page.results.map((r) => r.propertyId));
    }
    expect(props).toEqual(["p1", "p2"]);
  });

  it("stops on an empty result", async () => {
    server = await startTestServer((_req, res) =>
      sendJson(res, 200, { results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false } }),
    );
    const { client } = clientFor(server);
    const pages = [];
    for await (const page of client.segmentPages()) pages.push(page);
    expect(pages).toHaveLength(1);
  });

  it("reports a service that repeats a cursor instead of looping for ever", async () => {
    server = await startTestServer((_req, res) => sendJson(res, 200, segmentsPage(["x"], "same")));
    const { client } = clientFor(server);
    const consume = async () => {
      for await (const _ of client.segmentPages()) {
        // draining
      }
    };
    await expect(consume()).rejects.toBeInstanceOf(UnexpectedResponseError);
    expect(server.requests).toHaveLength(2);
  });
});

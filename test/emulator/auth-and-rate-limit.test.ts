import { afterEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

function expectRateHeaders(h: Headers): void {
  expect(h.get("x-ratelimit-limit")).toMatch(/^\d+$/);
  expect(h.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
  expect(h.get("x-ratelimit-reset")).toMatch(/^\d+$/);
}

describe("authentication", () => {
  it("answers 401 text Unauthorized without a token, with the rate-limit headers", async () => {
    emu = await startTestEmulator({ rateLimit: "100/60s" });
    const res = await raw(emu, "GET", "/incentives/incentive_1", { token: null });
    expect(res.status).toBe(401);
    expect(res.text).toBe("Unauthorized");
    expect(res.contentType).toMatch(/^text\/plain/);
    expectRateHeaders(res.headers);
  });

  it("answers 401 for an unknown token and for a non-bearer header", async () => {
    emu = await startTestEmulator();
    expect((await raw(emu, "GET", "/incentives/incentive_1", { token: "nope" })).status).toBe(401);
    const basic = await raw(emu, "GET", "/incentives/incentive_1", {
      token: null,
      headers: { authorization: `Basic ${emu.token}` },
    });
    expect(basic.status).toBe(401);
    expect(basic.text).toBe("Unauthorized");
  });

  it("keeps answering 401, never 429, to callers without a valid token, and spends no token's quota", async () => {
    emu = await startTestEmulator({ rateLimit: "3/60s" });
    for (let i = 0; i < 6; i++) {
      const res = await raw(emu, "GET", "/incentives/incentive_1", { token: i % 2 ? null : "nope" });
      expect(res.status).toBe(401);
      expectRateHeaders(res.headers);
    }
    const ok = await raw(emu, "GET", "/incentives/incentive_1");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ratelimit-remaining")).toBe("2");
  });

  it("uses the default token emulator-token with every permission when none is configured", async () => {
    const { startEmulator } = await import("../../src/emulator/index.ts");
    const e = await startEmulator({ port: 0, rateLimit: false });
    try {
      expect(e.tokens).toEqual([
        {
          token: "emulator-token",
          permissions: ["view_emails", "access_all_people", "read_screeners", "view_incentive_recipients"],
        },
      ]);
      const res = await fetch(`${e.baseUrl}/messages/emails/search`, {
        method: "POST",
        headers: { authorization: "Bearer emulator-token", "content-type": "application/json" },
        body: "{}",
      });
      expect(res.status).toBe(200);
    } finally {
      await e.close();
    }
  });

  it("answers 403 text Forbidden to an email search without view_emails and access_all_people", async () => {
    emu = await startTestEmulator({
      rateLimit: "100/60s",
      tokens: [
        "none:",
        "emails:view_emails",
        "people:access_all_people",
        "both:view_emails,access_all_people",
      ],
    });
    for (const token of ["none", "emails", "people"]) {
      const res = await raw(emu, "POST", "/messages/emails/search", { token, body: {} });
      expect(res.status).toBe(403);
      expect(res.text).toBe("Forbidden");
      expect(res.contentType).toMatch(/^text\/plain/);
      expectRateHeaders(res.headers);
    }
    expect((await raw(emu, "POST", "/messages/emails/search", { token: "both", body: {} })).status).toBe(200);
  });

  it("returns a study's screener as null to a caller that cannot read screeners", async () => {
    emu = await startTestEmulator({ tokens: ["blind:view_emails"] });
    const blind = emu.clientFor({ token: "blind" });
    const study = await blind.updateStudy("study_1", { studyPlan: {} });
    expect(study.screener).toBeNull();
    const full = await emu.client.updateStudy("study_1", { studyPlan: {} });
    expect(full.screener?.type).toBe("NATIVE");
  });

  it("masks an incentive's recipientEmail without view_incentive_recipients", async () => {
    emu = await startTestEmulator({ tokens: ["masked:view_emails"] });
    const full = await emu.client.getIncentive("incentive_1");
    const masked = await emu.clientFor({ token: "masked" }).getIncentive("incentive_1");
    expect(full.recipientEmail).toMatch(/@example\.com$/);
    expect(masked.recipientEmail).not.toBe(full.recipientEmail);
    expect(masked.recipientEmail).toContain("***");
    // A deleted recipient stays null either way.
    expect((await emu.clientFor({ token: "masked" }).getIncentive("incentive_8")).recipientEmail).toBeNull();
  });
});

describe("rate limiting", () => {
  it("counts down X-RateLimit-Remaining per token and answers 429 Too Many Requests with Retry-After", async () => {
    emu = await startTestEmulator({ rateLimit: "3/60s", tokens: ["other"] });
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await raw(emu, "GET", "/incentives/incentive_1");
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("3");
      seen.push(res.headers.get("x-ratelimit-remaining") ?? "");
    }
    expect(seen).toEqual(["2", "1", "0"]);
    const refused = await raw(emu, "GET", "/incentives/incentive_1");
    expect(refused.status).toBe(429);
    expect(refused.text).toBe("Too Many Requests");
    expect(refused.contentType).toMatch(/^text\/plain/);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Reset is seconds until the window ends by default.
    const reset = Number(refused.headers.get("x-ratelimit-reset"));
    expect(reset).toBeGreaterThanOrEqual(1);
    expect(reset).toBeLessThanOrEqual(60);
    // Another token has its own budget.
    expect((await raw(emu, "GET", "/incentives/incentive_1", { token: "other" })).status).toBe(200);
  });

  it("can give X-RateLimit-Reset in epoch seconds", async () => {
    emu = await startTestEmulator({ rateLimit: "10/60s", resetUnit: "epoch-seconds" });
    const res = await raw(emu, "GET", "/incentives/incentive_1");
    const reset = Number(res.headers.get("x-ratelimit-reset"));
    const nowSeconds = Date.now() / 1000;
    expect(reset).toBeGreaterThan(nowSeconds);
    expect(reset).toBeLessThanOrEqual(nowSeconds + 61);
  });

  it("puts the headers on 409 and 500 answers too", async () => {
    emu = await startTestEmulator({ rateLimit: "100/60s" });
    const conflict = await raw(emu, "GET", "/studies/study_5/screener");
    expect(conflict.status).toBe(409);
    expectRateHeaders(conflict.headers);
    await emu.admin("/faults", { body: { route: "getIncentive", errorRate: 1 } });
    const failed = await raw(emu, "GET", "/incentives/incentive_1");
    expect(failed.status).toBe(500);
    expect(failed.text).toBe("Internal Server Error");
    expectRateHeaders(failed.headers);
  });

  it("lets the client read the budget from the headers", async () => {
    emu = await startTestEmulator({ rateLimit: "5/30s" });
    const infos: { limit: number; remaining: number }[] = [];
    const client = emu.clientFor({
      onResponse: (ctx) => {
        if (ctx.rateLimit) infos.push({ limit: ctx.rateLimit.limit, remaining: ctx.rateLimit.remaining });
      },
    });
    await client.getCustomIncentive("custom_incentive_1");
    expect(infos).toEqual([{ limit: 5, remaining: 4 }]);
  });

  it("can be changed at run time through the admin API", async () => {
    emu = await startTestEmulator();
    const res = await emu.admin("/rate-limit", { body: { requests: 1, windowSeconds: 60 } });
    expect(res.status).toBe(200);
    expect((await raw(emu, "GET", "/incentives/incentive_1")).status).toBe(200);
    expect((await raw(emu, "GET", "/incentives/incentive_1")).status).toBe(429);
  });
});

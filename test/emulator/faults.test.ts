import { afterEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe("faults", () => {
  it("answers 500 Internal Server Error on the routes a rule names, set at start", async () => {
    emu = await startTestEmulator({ faults: [{ route: "getIncentive", errorRate: 1 }] });
    const res = await raw(emu, "GET", "/incentives/incentive_1");
    expect([res.status, res.text]).toEqual([500, "Internal Server Error"]);
    expect(res.contentType).toMatch(/^text\/plain/);
    expect((await raw(emu, "GET", "/incentives/custom/custom_incentive_1")).status).toBe(200);
  });

  it("starts a 429 storm with Retry-After through the admin API, and clears it", async () => {
    emu = await startTestEmulator({ rateLimit: "100/60s" });
    const set = await emu.admin("/faults", { body: { route: "*", stormSeconds: 60 } });
    expect(set.status).toBe(200);
    const res = await raw(emu, "POST", "/segments/search", { body: {} });
    expect([res.status, res.text]).toEqual([429, "Too Many Requests"]);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    await emu.admin("/faults", { method: "DELETE" });
    expect((await raw(emu, "POST", "/segments/search", { body: {} })).status).toBe(200);
  });

  it("drops connections without an answer", async () => {
    emu = await startTestEmulator({ faults: [{ route: "searchSegments", dropRate: 1 }] });
    await expect(
      fetch(`${emu.baseUrl}/segments/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${emu.token}` },
      }),
    ).rejects.toThrow();
    const counts = await emu.requests();
    expect(counts.byRoute.searchSegments).toEqual({ dropped: 1 });
  });

  it("delays and trickles bodies without changing them", async () => {
    emu = await startTestEmulator();
    const plain = await raw(emu, "POST", "/segments/search", { body: { pageInfo: { size: 30 } } });
    await emu.admin("/faults", {
      body: { faults: [{ route: "searchSegments", latencyMs: [5, 20], slowBodyMs: 50 }] },
    });
    const slow = await raw(emu, "POST", "/segments/search", { body: { pageInfo: { size: 30 } } });
    expect(slow.status).toBe(200);
    expect(slow.text).toBe(plain.text);
    const listed = (await (await emu.admin("/faults")).json()) as { faults: unknown[] };
    expect(listed.faults).toEqual([{ route: "searchSegments", latencyMs: [5, 20], slowBodyMs: 50 }]);
  });

  it("applies a rule with a count to that many requests only, which the client's retry rides out", async () => {
    emu = await startTestEmulator();
    await emu.admin("/faults", { body: { route: "getIncentive", errorRate: 1, count: 2 } });
    const client = emu.clientFor({ retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } });
    expect((await client.getIncentive("incentive_1")).incentiveId).toBe("incentive_1");
    expect((await emu.requests()).byRoute.getIncentive).toEqual({ "500": 2, "200": 1 });
  });

  it("accepts operationId and latency as other names of route and latencyMs", async () => {
    emu = await startTestEmulator();
    const res = await emu.admin("/faults", {
      body: { operationId: "getCustomIncentive", latency: 1, errorRate: 1 },
    });
    expect(res.status).toBe(200);
    expect((await raw(emu, "GET", "/incentives/custom/custom_incentive_1")).status).toBe(500);
  });

  it("refuses a rule for an unknown route with 400 JSON", async () => {
    emu = await startTestEmulator();
    const res = await emu.admin("/faults", { body: { route: "nope", errorRate: 1 } });
    expect(res.status).toBe(400);
  });
});

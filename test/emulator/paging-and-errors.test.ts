import { afterEach, describe, expect, it } from "vitest";
import type { Participant } from "../../src/api/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe("paging", () => {
  it("pages a study's participants by passing endCursor back as pageInfo.startCursor", async () => {
    emu = await startTestEmulator({ sizes: { people: 200, participantsPerStudy: 95 } });
    const seen: Participant[] = [];
    for await (const page of emu.client.participantPages("study_5", { pageSize: 20 })) {
      expect(page.total).toBe(95);
      seen.push(...page.results);
    }
    expect(seen).toHaveLength(95);
    expect(new Set(seen.map((p) => p.participantId)).size).toBe(95);
    const p = seen[0] as Participant;
    expect(p).toMatchObject({
      studyId: "study_5",
      personId: expect.any(String),
      email: expect.any(String),
      phone: expect.any(String),
    });
    expect(Array.isArray(p.additionalEmails)).toBe(true);
    expect(Array.isArray(p.additionalPhones)).toBe(true);
  });

  it("pages segments with total and pageInfo, and an empty last page has no next page", async () => {
    emu = await startTestEmulator({ sizes: { segments: 30 } });
    const first = await emu.client.searchSegments({ size: 25 });
    expect(first).toMatchObject({ total: 30, pageInfo: { hasNextPage: true, hasPreviousPage: false } });
    expect(first.results[0]).toEqual({ segmentId: "segment_1", name: expect.any(String) });
    const second = await emu.client.searchSegments({ size: 25, startCursor: first.pageInfo.endCursor ?? "" });
    expect(second.results).toHaveLength(5);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const beyond = await emu.client.searchSegments({
      size: 25,
      startCursor: second.pageInfo.endCursor ?? "",
    });
    expect(beyond.results).toHaveLength(0);
    expect(beyond.pageInfo.hasNextPage).toBe(false);
  });

  it("accepts a search without a body and refuses a page size over 100 or an unknown cursor", async () => {
    emu = await startTestEmulator();
    const bare = await raw(emu, "POST", "/segments/search");
    expect(bare.status).toBe(200);
    expect(bare.json<{ results: unknown[] }>().results).toHaveLength(25);
    const big = await raw(emu, "POST", "/segments/search", { body: { pageInfo: { size: 101 } } });
    expect(big.status).toBe(400);
    expect(big.json<{ errors: { path: unknown[] }[] }>().errors[0]?.path).toEqual(["pageInfo", "size"]);
    const filter = await raw(emu, "POST", "/segments/search", { body: { filter: {} } });
    expect(filter.status).toBe(400);
    const cursor = await raw(emu, "POST", "/segments/search", {
      body: { pageInfo: { startCursor: "not-ours" } },
    });
    expect(cursor.status).toBe(400);
    const missing = await raw(emu, "POST", "/studies/nope/participants/search", { body: {} });
    expect([missing.status, missing.text]).toEqual([404, "Study not found"]);
  });
});

describe("errors", () => {
  it("answers 400 JSON errors to a body that is not JSON", async () => {
    emu = await startTestEmulator();
    for (const [method, path] of [
      ["PUT", "/studies/study_1/screener"],
      ["POST", "/segments/search"],
      ["PATCH", "/studies/study_1"],
    ] as const) {
      const res = await raw(emu, method, path, { body: "{not json" });
      expect(res.status).toBe(400);
      expect(res.contentType).toMatch(/^application\/json/);
      expect(res.json()).toEqual({ errors: [{ message: expect.any(String), path: [] }] });
    }
    const text = await raw(emu, "PUT", "/people/person_1/opted-out", {
      body: "true",
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(400);
    const empty = await raw(emu, "PUT", "/studies/study_1/screener");
    expect(empty.status).toBe(400);
    expect(empty.json<{ errors: unknown[] }>().errors).toHaveLength(1);
  });

  it("answers 400 plain text Bad Request to an empty path id, as spec 4.2 lists for the screener", async () => {
    emu = await startTestEmulator();
    for (const path of ["/studies//screener", "/incentives/", "/incentives/custom/"]) {
      const res = await raw(emu, "GET", path);
      expect([res.status, res.text], path).toEqual([400, "Bad Request"]);
      expect(res.contentType).toMatch(/^text\/plain/);
    }
  });

  it("answers 404 text Not Found to unknown routes and methods", async () => {
    emu = await startTestEmulator({ rateLimit: "100/60s" });
    for (const [method, path] of [
      ["GET", "/studies"],
      ["DELETE", "/studies/study_1"],
      ["GET", "/studies/study_1"],
    ] as const) {
      const res = await raw(emu, method, path);
      expect([res.status, res.text]).toEqual([404, "Not Found"]);
      expect(res.contentType).toMatch(/^text\/plain/);
      expect(res.headers.get("x-ratelimit-limit")).toBe("100");
    }
    expect((await fetch(`${emu.origin}/elsewhere`)).status).toBe(404);
  });

  it("maps error answers onto the client's error classes", async () => {
    emu = await startTestEmulator();
    const err = await emu.client.getIncentive("missing").catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 404, resource: "Incentive", code: "not_found" });
  });
});

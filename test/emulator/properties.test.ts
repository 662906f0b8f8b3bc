import { afterEach, describe, expect, it } from "vitest";
import type { PersonProperty } from "../../src/api/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe("POST /properties/delete", () => {
  it("deletes what it can and reports each other id in errors with its path", async () => {
    emu = await startTestEmulator({ sizes: { people: 20 } });
    const res = await emu.client.deleteProperties([
      "property_20",
      "property_404",
      "property_2",
      "property_20",
      "property_5",
    ]);
    expect(res.deleted).toEqual(["property_20", "property_2"]);
    expect(res.errors).toEqual([
      { message: expect.any(String), path: ["propertyIds", 1] },
      { message: expect.any(String), path: ["propertyIds", 3] },
      // property_5 is mapped by a screener question of a seeded study.
      { message: expect.any(String), path: ["propertyIds", 4] },
    ]);
    const snap = await emu.snapshot();
    expect(snap.personProperties.map((p) => p.propertyId)).not.toContain("property_2");
    expect(snap.people.some((p) => p.properties.some((v) => v.propertyId === "property_2"))).toBe(false);
  });

  it("answers an empty result to an empty list and 400 JSON to a malformed body", async () => {
    emu = await startTestEmulator();
    expect(await emu.client.deleteProperties([])).toEqual({ deleted: [], errors: [] });
    const bad = await raw(emu, "POST", "/properties/delete", { body: { propertyIds: "property_1" } });
    expect(bad.status).toBe(400);
    expect(bad.json<{ errors: { path: unknown[] }[] }>().errors[0]?.path).toEqual(["propertyIds"]);
  });
});

describe("GET /property-groups/{propertyGroupId}/properties", () => {
  it("pages through a group with cursor and pageSize, with total and pageInfo", async () => {
    emu = await startTestEmulator({ sizes: { properties: 40 } });
    const seen: PersonProperty[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await emu.client.listPropertyGroupProperties("property_group_4", {
        pageSize: 10,
        ...(cursor ? { cursor } : {}),
      });
      pages++;
      expect(page.total).toBe(32);
      expect(page.pageInfo.hasPreviousPage).toBe(pages > 1);
      seen.push(...page.results);
      if (!page.pageInfo.hasNextPage) break;
      cursor = page.pageInfo.endCursor ?? undefined;
    }
    expect(pages).toBe(4);
    expect(new Set(seen.map((p) => p.propertyId)).size).toBe(32);
    for (const p of seen) expect(p.propertyGroupId).toBe("property_group_4");
  });

  it("returns whole person properties with unique and non-unique ones", async () => {
    emu = await startTestEmulator();
    const identity = await emu.client.listPropertyGroupProperties("property_group_1");
    expect(identity.results.map((p) => [p.propertyId, p.isUnique])).toEqual([
      ["property_1", true],
      ["property_2", true],
    ]);
    const profile = await emu.client.listPropertyGroupProperties("property_group_2");
    const country = profile.results.find((p) => p.name === "Country");
    expect(country).toMatchObject({
      propertyType: "SINGLE_SELECT",
      isUnique: false,
      isPHI: false,
      isPII: false,
    });
    expect(country?.propertyOptions?.[0]).toEqual({
      propertyOptionId: expect.any(String),
      name: "United States",
      color: "GREY",
      order: "0",
    });
    const empty = await emu.client.listPropertyGroupProperties("property_group_5");
    expect(empty).toMatchObject({
      results: [],
      total: 0,
      pageInfo: { hasNextPage: false, hasPreviousPage: false },
    });
  });

  it("answers 400 JSON for a page size over 100 and 404 Property group not found", async () => {
    emu = await startTestEmulator();
    const big = await raw(emu, "GET", "/property-groups/property_group_4/properties?pageSize=101");
    expect(big.status).toBe(400);
    expect(big.json<{ errors: { path: unknown[] }[] }>().errors[0]?.path).toEqual(["pageSize"]);
    expect((await raw(emu, "GET", "/property-groups/property_group_4/properties?pageSize=100")).status).toBe(
      200,
    );
    const missing = await raw(emu, "GET", "/property-groups/nope/properties");
    expect([missing.status, missing.text]).toEqual([404, "Property group not found"]);
    const badCursor = await raw(emu, "GET", "/property-groups/property_group_4/properties?cursor=garbage");
    expect(badCursor.status).toBe(400);
  });
});

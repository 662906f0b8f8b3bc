import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KeyIndex, mergePersons } from "../../src/imports/index.ts";
import { dryRun, type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

describe("merging two rows of one person", () => {
  it("lets the later row win field by field and keeps what it omits", () => {
    expect(
      mergePersons(
        { email: "a@x.org", firstName: "Ann", lastName: "Lee", lastContactDate: "2024-01-01" },
        { email: "A@x.org", lastName: "Lee-Smith", isOptedOut: true },
      ),
    ).toEqual({
      email: "A@x.org",
      firstName: "Ann",
      lastName: "Lee-Smith",
      lastContactDate: "2024-01-01",
      isOptedOut: true,
    });
  });

  it("lets a later null overwrite, as it will on the service", () => {
    expect(
      mergePersons({ email: "a@x.org", firstName: "Ann" }, { email: "a@x.org", firstName: null }),
    ).toEqual({
      email: "a@x.org",
      firstName: null,
    });
  });

  it("unites lists and keeps a replaced phone or email as an additional one", () => {
    expect(
      mergePersons(
        {
          email: "a@x.org",
          phone: "+14155550132",
          additionalEmails: ["b@x.org"],
          additionalPhones: ["+14155550100"],
        },
        { email: "a@x.org", phone: "+14155550199", additionalEmails: ["B@x.org", "c@x.org"] },
      ),
    ).toEqual({
      email: "a@x.org",
      phone: "+14155550199",
      additionalEmails: ["b@x.org", "c@x.org"],
      additionalPhones: ["+14155550100", "+14155550132"],
    });
  });

  it("merges properties by id or name, the later value winning", () => {
    expect(
      mergePersons(
        {
          email: "a@x.org",
          properties: [
            { propertyId: "p1", value: "old" },
            { name: "Company", propertyType: "STRING", value: "Acme" },
          ],
        },
        {
          email: "a@x.org",
          properties: [
            { propertyId: "p1", value: "new" },
            { propertyId: "p2", value: "x" },
          ],
        },
      ).properties,
    ).toEqual([
      { propertyId: "p1", value: "new" },
      { name: "Company", propertyType: "STRING", value: "Acme" },
      { propertyId: "p2", value: "x" },
    ]);
  });
});

describe("the key index", () => {
  it("returns the previous row of a key and grows past its first capacity", () => {
    const index = new KeyIndex();
    for (let i = 0; i < 50_000; i++) expect(index.put(`person${i}@x.org`, i)).toBe(-1);
    expect(index.put("person7@x.org", 50_000)).toBe(7);
    expect(index.put("person7@x.org", 50_001)).toBe(50_000);
    expect(index.size).toBe(50_000);
  });
});

describe("duplicates within a file", () => {
  let s: Scratch;
  beforeEach(async () => {
    s = await scratch();
  });
  afterEach(async () => {
    await s.cleanup();
  });

  it("spills and merges a person larger than the spill's write buffer", async () => {
    const big = "é".repeat(1_500_000);
    const file = await s.file("big.csv", `Email,Name\na@x.org,${big}\nb@x.org,Bob\na@x.org,\n`);
    const { report, people } = await dryRun(
      s,
      file,
      simpleDefinition({ source: { maxFieldLength: 2_000_000 } }),
    );
    expect(report).toMatchObject({ rowsRead: 3, imported: 2, duplicates: 1 });
    expect(people.map((p) => [p.email, String(p.firstName).length])).toEqual([
      ["b@x.org", 3],
      ["a@x.org", big.length],
    ]);
  });

  it("sends one person per identifier at the place of its last row, merged", async () => {
    const def = simpleDefinition({
      columns: [
        { column: "Email", to: "email", transforms: ["lowercase"] },
        { column: "Name", to: "firstName", empty: "null" },
        { column: "Phone", to: "phone", transforms: [{ phone: "US" }] },
      ],
      batchSize: 2,
    });
    const file = await s.file(
      "dup.csv",
      [
        "Email,Name,Phone",
        "ann@x.org,Ann,(415) 555-0132",
        "bob@x.org,Bob,",
        "ANN@x.org,,(415) 555-0199",
        "cy@x.org,Cy,",
        "bob@x.org,Robert,",
        "",
      ].join("\n"),
    );
    const { report, people } = await dryRun(s, file, def);
    expect(report).toMatchObject({ rowsRead: 5, imported: 3, duplicates: 2, rejected: 0, batches: 2 });
    expect(people).toEqual([
      { email: "ann@x.org", firstName: null, phone: "+14155550199", additionalPhones: ["+14155550132"] },
      { email: "cy@x.org", firstName: "Cy" },
      { email: "bob@x.org", firstName: "Robert" },
    ]);
  });
});

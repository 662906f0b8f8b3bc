import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hash32 } from "../../src/imports/dedupe.ts";
import { dedupeKey, KeyIndex, mergePersons, runImport } from "../../src/imports/index.ts";
import { startTestEmulator } from "../helpers/emulator.ts";
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
  /** What put must return: the last sequence number recorded under the key's hash, whichever key it was. */
  const model = () => {
    const last = new Map<number, number>();
    return (key: string, seq: number) => {
      const h = hash32(key);
      const previous = last.get(h) ?? -1;
      last.set(h, seq);
      return previous;
    };
  };

  it("returns the previous row of a key and grows past its first capacity", () => {
    const index = new KeyIndex();
    for (let i = 0; i < 50_000; i++) expect(index.put(`person${i}@x.org`, i)).toBe(-1);
    expect(index.put("person7@x.org", 50_000)).toBe(7);
    expect(index.put("person7@x.org", 50_001)).toBe(50_000);
    expect(index.size).toBe(50_000);
  });

  it("sized for an estimate part-way through, keeps every key and holds the estimate without doubling", () => {
    const index = new KeyIndex();
    const expected = model();
    const put = (key: string, seq: number) => expect(index.put(key, seq)).toBe(expected(key, seq));
    for (let i = 0; i < 3000; i++) put(`person${i}@x.org`, i);
    index.reserve(100_000);
    const reserved = index.capacity;
    // Not a power of two: a table sized for the file is not rounded up to twice that.
    expect(reserved).toBe(Math.ceil(100_000 / 0.75));
    for (let i = 3000; i < 100_000; i++) put(`person${i}@x.org`, i);
    expect(index.capacity).toBe(reserved);
    for (let i = 0; i < 100_000; i += 997) put(`person${i}@x.org`, 200_000 + i);
    // An estimate that was too low: the table grows past it and still finds every key.
    for (let i = 100_000; i < 130_000; i++) put(`person${i}@x.org`, i);
    expect(index.capacity).toBe(reserved * 2);
    for (let i = 0; i < 130_000; i += 1009) put(`person${i}@x.org`, 300_000 + i);
    // Keys, not distinct hashes: 130,000 keys share a few.
    const hashes = new Set(Array.from({ length: 130_000 }, (_, i) => hash32(`person${i}@x.org`))).size;
    expect(hashes).toBeLessThan(130_000);
    expect(index.size).toBe(hashes);
    // A smaller reserve never shrinks it.
    index.reserve(10);
    expect(index.capacity).toBe(reserved * 2);
  });
});

/** Two emails whose dedupe keys (no population) share the index's 32-bit hash: the first pair the index meets. */
function collidingEmails(): [string, string] {
  const index = new KeyIndex();
  const email = (i: number) => `c${i}@x.org`;
  for (let i = 0; i < 1_000_000; i++) {
    const earlier = index.put(dedupeKey(null, email(i)), i);
    if (earlier !== -1) return [email(earlier), email(i)];
  }
  throw new Error("no two of a million keys share a 32-bit hash");
}

describe("two keys sharing the index's hash", () => {
  it("are linked by the index and stay two people in the import, each merged with its own rows", async () => {
    const [a, b] = collidingEmails();
    expect(a).not.toBe(b);
    const s = await scratch();
    try {
      const file = await s.file(
        "collide.csv",
        ["Email,Name", `${a},Ann`, `${b},Bob`, `${a},`, `${b},Robert`, ""].join("\n"),
      );
      const { report, people } = await dryRun(s, file, simpleDefinition());
      expect(report).toMatchObject({ rowsRead: 4, imported: 2, duplicates: 2, rejected: 0 });
      expect(people).toEqual([
        { email: a, firstName: "Ann" },
        { email: b, firstName: "Robert" },
      ]);
    } finally {
      await s.cleanup();
    }
  });
});

describe("the dedupe key", () => {
  it("scopes the identifier by population, no population being a scope of its own", () => {
    const keys = [
      dedupeKey(null, "a@x.org"),
      dedupeKey("population_1", "a@x.org"),
      dedupeKey("population_2", "a@x.org"),
      // No population and identifier pair can spell another pair's key.
      dedupeKey("p", "\u0000a@x.org"),
      dedupeKey("p\u0000", "a@x.org"),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    expect(dedupeKey("population_1", "a@x.org")).toBe(dedupeKey("population_1", "a@x.org"));
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
      ["a@x.org", big.length],
      ["b@x.org", 3],
    ]);
  });

  it("sends one person per identifier at the place of its first row, merged, when the rows come before anything is sent", async () => {
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
      { email: "bob@x.org", firstName: "Robert" },
      { email: "cy@x.org", firstName: "Cy" },
    ]);
  });

  const panels = (batchSize = 500) =>
    simpleDefinition({
      target: {
        studyId: "study_2",
        population: { column: "Panel", values: { eu: "population_1", us: "population_2" } },
      },
      columns: [
        { column: "Email", to: "email", transforms: ["lowercase"] },
        { column: "Name", to: "firstName" },
        { column: "Phone", to: "phone", transforms: [{ phone: "US" }] },
      ],
      batchSize,
    });

  it("keeps the same email in two populations as two people, and merges within one", async () => {
    const file = await s.file(
      "panels.csv",
      [
        "Email,Name,Phone,Panel",
        "sam@x.org,Sam EU,(415) 555-0132,eu",
        "SAM@x.org,Sam US,,us",
        "sam@x.org,,(415) 555-0199,eu",
        "",
      ].join("\n"),
    );
    const { report, bodies } = await dryRun(s, file, panels(1));
    expect(report).toMatchObject({ rowsRead: 3, imported: 2, duplicates: 1, rejected: 0 });
    expect(bodies.map((b) => [b.populationId, b.people])).toEqual([
      [
        "population_1",
        [
          {
            email: "sam@x.org",
            firstName: "Sam EU",
            phone: "+14155550199",
            additionalPhones: ["+14155550132"],
          },
        ],
      ],
      ["population_2", [{ email: "sam@x.org", firstName: "Sam US" }]],
    ]);
  });

  it("imports a person for each population on the service, none lost", async () => {
    const emu = await startTestEmulator({ sizes: { people: 20 } });
    try {
      const file = await s.file(
        "panels-e2e.csv",
        "Email,Name,Phone,Panel\nsam@x.org,Sam EU,,eu\nsam@x.org,Sam US,,us\nkim@x.org,Kim,,eu\nkim@x.org,Kimberly,,eu\n",
      );
      const report = await runImport({
        file,
        definition: panels(),
        client: emu.client,
        rejectsFile: `${s.dir}/panels.rejects.csv`,
        workDir: s.dir,
      });
      expect(report).toMatchObject({ rowsRead: 4, imported: 3, duplicates: 1, rejected: 0, requests: 2 });
      const snap = await emu.snapshot();
      const mine = (email: string) =>
        snap.people
          .filter((p) => p.email === email)
          .map((p) => [p.firstName, p.populationIds])
          .sort();
      expect(mine("sam@x.org")).toEqual([
        ["Sam EU", ["population_1"]],
        ["Sam US", ["population_2"]],
      ]);
      expect(mine("kim@x.org")).toEqual([["Kimberly", ["population_1"]]]);
    } finally {
      await emu.close();
    }
  });
});

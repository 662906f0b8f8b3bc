import { describe, expect, it } from "vitest";
import type { ImportPerson } from "../../../src/api/index.ts";
import { dedupeKey, identifierKey, mergePersons } from "../../../src/imports/rules/index.ts";
import { mapRows } from "./jobs.ts";

// A person seen in several rows: which rows are one person, and the one person they make.

/** The rows' people merged per person, in the order each person first appears, as the merge phase sends them. */
function mergedPeople(rows: ReturnType<typeof mapRows>): ImportPerson[] {
  const people = new Map<string, ImportPerson>();
  for (const row of rows) {
    if (!row.ok) continue;
    const key = dedupeKey(row.population, row.key);
    const earlier = people.get(key);
    people.set(key, earlier === undefined ? row.person : mergePersons(earlier, row.person));
  }
  return [...people.values()];
}

describe("a person seen in several rows", () => {
  const columns = [
    { column: "Email", to: "email", transforms: ["lowercase"] },
    { column: "Phone", to: "phone", transforms: ["phone"] },
    { column: "First", to: "firstName" },
    { column: "Team", to: { name: "Team", propertyType: "STRING" } },
  ];

  it("is one person by the identifier's value, whatever its case, the later row winning field by field", () => {
    const rows = mapRows(["Email", "Phone", "First", "Team"], { phoneCountry: "DE", columns }, [
      ["Ann@x.org", "030 1234567", "Ann", "Blue"],
      ["bob@x.org", "", "Bob", ""],
      ["ann@X.org", "030 7654321", "", "Red"],
    ]);
    expect(mergedPeople(rows)).toEqual([
      {
        email: "ann@x.org",
        phone: "+49307654321",
        // The phone the later row replaced is kept: no contact detail is lost.
        additionalPhones: ["+49301234567"],
        firstName: "Ann",
        properties: [{ name: "Team", propertyType: "STRING", value: "Red" }],
      },
      { email: "bob@x.org", firstName: "Bob" },
    ]);
  });

  it("is two people in two populations: the service matches within the population", () => {
    expect(dedupeKey("pop_a", "ann@x.org")).not.toBe(dedupeKey("pop_b", "ann@x.org"));
    expect(dedupeKey(null, "ann@x.org")).not.toBe(dedupeKey("pop_a", "ann@x.org"));
    // A population's name cannot spell another pair's key.
    expect(dedupeKey("a", "\u0000b")).not.toBe(dedupeKey("a\u0000", "b"));
  });

  it("is keyed by the identifier the job names: an email in any case, a phone, or a property's value", () => {
    const person: ImportPerson = {
      email: "Ann@X.org",
      phone: "+49301234567",
      properties: [{ propertyId: "prop_member", value: "M-1" }],
    };
    expect(identifierKey(person, "email")).toBe("ann@x.org");
    expect(identifierKey(person, "phone")).toBe("+49301234567");
    expect(identifierKey(person, "property:prop_member")).toBe("M-1");
    expect(identifierKey(person, "property:prop_other")).toBeUndefined();
  });
});

import path from "node:path";
import { describe, expect, it } from "vitest";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { MappingSuggestion, suggestMapping, suggestMappingForFile } from "../../src/suggest/index.ts";
import { EXPECTED_LAYOUTS } from "./expected-mappings.ts";

const FIXTURES = path.join(import.meta.dirname, "fixtures");

function targetOf(to: MappingSuggestion["columns"][number]["to"]): string | null {
  if (to === null) return null;
  return typeof to === "string" ? to : "property";
}

describe("mapping suggestions of real-world header layouts", () => {
  it("keeps at least 12 layouts", () => {
    expect(EXPECTED_LAYOUTS.length).toBeGreaterThanOrEqual(12);
  });

  it("maps at least 90% of all columns as a person would, and no non-person column to a person field", async () => {
    let columns = 0;
    let right = 0;
    const wrong: string[] = [];
    const nonPersonMapped: string[] = [];
    for (const layout of EXPECTED_LAYOUTS) {
      const s = await suggestMappingForFile(path.join(FIXTURES, layout.file), { name: "x" });
      expect(s.header, layout.file).toBe(layout.header);
      expect(
        s.columns.map((c) => c.column),
        layout.file,
      ).toEqual(Object.keys(layout.columns));
      for (const c of s.columns) {
        columns++;
        const expected = layout.columns[c.column];
        if (targetOf(c.to) === expected) right++;
        else wrong.push(`${layout.file}: ${c.column} → ${targetOf(c.to)}, expected ${expected}`);
        if (layout.nonPerson.includes(c.column) && typeof c.to === "string") {
          nonPersonMapped.push(`${layout.file}: ${c.column} → ${c.to}`);
        }
      }
    }
    const share = right / columns;
    // The figure is printed so that a change of the word lists shows what it did.
    console.info(`suggest: ${right} of ${columns} columns mapped right (${(share * 100).toFixed(1)}%)`);
    expect(share, wrong.join("\n")).toBeGreaterThanOrEqual(0.9);
    expect(nonPersonMapped).toEqual([]);
  });

  it.each(EXPECTED_LAYOUTS)("gives $source a definition the import-job schema accepts", async (layout) => {
    const s = await suggestMappingForFile(path.join(FIXTURES, layout.file), { name: "x" });
    expect(MappingSuggestion.safeParse(s).success).toBe(true);
    expect(s.problems).toEqual([]);
    const parsed = ImportJobDefinition.safeParse(s.definition);
    expect(parsed.success).toBe(true);
    // Every mapped column is written out, each once.
    const mapped = s.columns.filter((c) => c.to !== null).map((c) => c.column);
    expect(s.definition?.columns?.map((c) => c.column)).toEqual(mapped);
  });

  it("names the CRM's preset when its signature columns are there, and only then", async () => {
    const presets: Record<string, string | null> = {};
    for (const layout of EXPECTED_LAYOUTS) {
      presets[layout.file] = (
        await suggestMappingForFile(path.join(FIXTURES, layout.file), { name: "x" })
      ).preset;
    }
    expect(presets["hubspot-contacts.csv"]).toBe("hubspot");
    expect(presets["salesforce-contacts.csv"]).toBe("salesforce");
    expect(presets["mailchimp-audience.csv"]).toBe("mailchimp");
    expect(Object.values(presets).filter((p) => p !== null)).toHaveLength(3);
  });

  it("reads a header-less column of emails as the email identifier, with source.header false", async () => {
    const s = await suggestMappingForFile(path.join(FIXTURES, "headerless-emails.csv"), { name: "list" });
    expect(s.columns).toEqual([
      expect.objectContaining({ column: "column1", to: "email", why: "values", transforms: ["lowercase"] }),
    ]);
    expect(s.definition).toMatchObject({ source: { header: false }, target: { identifier: "email" } });
  });

  it("reads day-first dates in a German or French export and month-first in a Salesforce one", async () => {
    const dateOf = async (file: string) =>
      (await suggestMappingForFile(path.join(FIXTURES, file), { name: "x" })).columns.find(
        (c) => c.to === "lastContactDate",
      )?.transforms;
    expect(await dateOf("german-export.csv")).toEqual([{ date: ["DD.MM.YYYY"] }]);
    expect(await dateOf("french-export.csv")).toEqual([{ date: ["DD/MM/YYYY"] }]);
    expect(await dateOf("salesforce-contacts.csv")).toEqual([
      { date: ["M/D/YYYY", "M/D/YYYY h:mm A", "M/D/YYYY H:mm", "iso"] },
    ]);
  });

  it("says why in notes that hold headers and counts, never a cell", async () => {
    for (const layout of EXPECTED_LAYOUTS) {
      const s = await suggestMappingForFile(path.join(FIXTURES, layout.file), { name: "x" });
      const text = JSON.stringify(s);
      expect(text, layout.file).not.toMatch(/@example\.org|555/);
    }
  });

  it("suggests no definition when no column can identify a person", () => {
    const s = suggestMapping(
      [
        ["Company", "Notes"],
        ["Acme", "call back"],
      ],
      { name: "x" },
    );
    expect(s.definition).toBeNull();
    expect(s.problems).toEqual([
      { path: "target.identifier", message: expect.stringMatching(/no column reads as an email/) },
    ]);
  });

  it("never gives a person field to an owner's column of emails, however its values look", () => {
    const s = suggestMapping(
      [
        ["Contact Owner Email", "Email"],
        ["owner@example.org", "ann@example.org"],
      ],
      { name: "x" },
    );
    expect(s.columns.map((c) => c.to)).toEqual([null, "email"]);
  });

  it("maps a consent column to isOptedOut with explicit words, its no opting out, and splits a list of emails on the commas it uses", () => {
    const s = suggestMapping(
      [
        ["Email", "Other emails", "Einwilligung"],
        ["ann@example.org", "a@example.org, b@example.org", "ja"],
        ["bob@example.org", "", "nein"],
      ],
      { name: "x" },
    );
    expect(s.columns.map((c) => [c.to, c.transforms])).toEqual([
      ["email", ["lowercase"]],
      ["additionalEmails", [{ split: "," }, "lowercase"]],
      [
        "isOptedOut",
        [
          {
            boolean: {
              true: expect.arrayContaining(["nein", "unsubscribed"]),
              false: expect.arrayContaining(["ja", "subscribed"]),
            },
          },
        ],
      ],
    ]);
  });
});

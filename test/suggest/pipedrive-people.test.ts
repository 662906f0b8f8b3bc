import { describe, expect, it } from "vitest";
import { suggestMapping } from "../../src/suggest/index.ts";
import { looksLikePhone } from "../../src/suggest/value-kinds.ts";

/** Rows shaped as a Pipedrive people export writes them (people made up here). */
const HEADER = [
  "Person - Marketing status",
  "Person - Name",
  "Person - Email - Work",
  "Person - Phone - Work",
  "Person - Phone - Other",
];
const ROWS = [
  ["Subscribed", "Ada Lane", "ada@example.co.uk", "01632 960001", "'+44 20 7946 0001"],
  ["No consent", "Ben Hart", "ben@example.co.uk", "01632 960002", ""],
  ["Unsubscribed", "Cy Moss", "cy@example.co.uk", "", "'+44 20 7946 0003"],
  ["Bounced", "Di Rowe", "di@example.co.uk", "01632 960004", "'+33 2 37 83 44 43"],
  ["No consent", "Ed Pike", "ed@example.co.uk", "", ""],
];

describe("a Pipedrive people export", () => {
  const s = suggestMapping([HEADER, ...ROWS], { name: "x", studyId: "study_1" });
  const column = (name: string) => s.columns.find((c) => c.column === name);

  it("reads Marketing status as a subscription: Unsubscribed opts out, Subscribed does not, No consent says nothing", () => {
    const status = column("Person - Marketing status");
    expect(status?.to).toBe("isOptedOut");
    const transform = status?.transforms?.[0] as { boolean: { true: string[]; false: string[] } };
    expect(transform.boolean.true).toContain("unsubscribed");
    expect(transform.boolean.false).toContain("subscribed");
    for (const silent of ["no consent", "bounced"]) {
      expect(transform.boolean.true).not.toContain(silent);
      expect(transform.boolean.false).not.toContain(silent);
    }
  });

  it("takes numbers behind a spreadsheet's apostrophe for phones", () => {
    expect(looksLikePhone("'+44 20 7946 0000")).toBe(true);
    expect(looksLikePhone("'hello")).toBe(false);
    expect(column("Person - Phone - Other")?.to).toBe("additionalPhones");
  });
});

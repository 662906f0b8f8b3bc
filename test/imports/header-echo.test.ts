import { describe, expect, it } from "vitest";
import { describeHeaders, looksLikeDataRow } from "../../src/imports/rules/index.ts";

describe("telling a header row from a person's row", () => {
  it("reads a row with an email or a phone number as a person", () => {
    expect(looksLikeDataRow(["Ada", "Lovelace", "ada@example.org"])).toBe(true);
    expect(looksLikeDataRow(["Ada", "Lovelace", "+44 20 7946 0958"])).toBe(true);
  });

  it("reads a row mostly of values as a person, and a lone number among names as a header row", () => {
    expect(looksLikeDataRow(["12", "2024-03-01", "Ada"])).toBe(true);
    // Event Espresso writes "0" over its row-number column.
    expect(
      looksLikeDataRow(["0", "Registration ID (optional)", "First", "Last", "Email", "QTY", "Event ID"]),
    ).toBe(false);
    expect(looksLikeDataRow(["First Name", "Last Name", "Email"])).toBe(false);
    expect(looksLikeDataRow(["", ""])).toBe(false);
  });

  it("never shows the cells of a row that reads as a person", () => {
    expect(describeHeaders(["ada@example.org", "Ada"])).not.toContain("Ada");
    expect(describeHeaders(["0", "First", "Email"])).toBe("it has: 0, First, Email");
  });
});

import { describe, expect, it } from "vitest";
import { consentPolarity, normalizeHeader, splitFullName, toE164 } from "../../../src/imports/rules/index.ts";
import { mapRows, personOf } from "./jobs.ts";

// The transforms a column's cells go through, alone and as a row's columns apply them.

describe("phone numbers", () => {
  it("read a national number in the default country and an international one as written", () => {
    const inGermany = toE164("DE");
    expect(inGermany("030 1234567")).toBe("+49301234567");
    expect(inGermany("+44 20 7946 0958")).toBe("+442079460958");
  });

  it("without a default country, fail a national number for want of one, and a non-number as invalid", () => {
    const nowhere = toE164(undefined);
    expect(nowhere("030 1234567")).toMatchObject({ code: "phone_needs_country" });
    expect(nowhere("12")).toMatchObject({ code: "invalid_phone" });
    expect(nowhere("+49 30 1234567")).toBe("+49301234567");
  });

  it("take each row's own country from the phoneCountryColumn, the job's default where it names none", () => {
    const rows = mapRows(
      ["Email", "Phone", "Country"],
      {
        phoneCountry: "US",
        phoneCountryColumn: "Country",
        columns: [
          { column: "Email", to: "email" },
          { column: "Phone", to: "phone", transforms: ["phone"] },
        ],
      },
      [
        ["a@x.org", "030 1234567", "Deutschland"],
        ["b@x.org", "020 7946 0958", "UK"],
        ["c@x.org", "(415) 555-0132", ""],
        ["d@x.org", "030 1234567", ""],
      ],
    );
    expect(rows.slice(0, 3).map((r) => personOf(r).phone)).toEqual([
      "+49301234567",
      "+442079460958",
      "+14155550132",
    ]);
    // The German number without its country is no American one: left out, the person still imported.
    expect(rows[3]).toMatchObject({
      ok: true,
      person: { email: "d@x.org" },
      dropped: [
        { field: "phone", code: "invalid_phone", message: "not a valid phone number (default country US)" },
      ],
    });
  });
});

describe("a full name", () => {
  it("splits into first and last, a title and a suffix read as such", () => {
    expect(splitFullName("Dr. Jane Q. Smith Jr.")).toEqual({ first: "Jane Q.", last: "Smith Jr." });
    expect(splitFullName("Jane Smith")).toEqual({ first: "Jane", last: "Smith" });
  });

  it("reads 'Last, First' the other way round, and one word as a first name", () => {
    expect(splitFullName("Smith, Jane")).toEqual({ first: "Jane", last: "Smith" });
    expect(splitFullName("Cher")).toEqual({ first: "Cher", last: "" });
  });

  it("fills only what a firstName or lastName column leaves", () => {
    const rows = mapRows(
      ["Email", "Name", "First"],
      {
        columns: [
          { column: "Email", to: "email" },
          { column: "Name", to: "fullName" },
          { column: "First", to: "firstName" },
        ],
      },
      [
        ["a@x.org", "Smith, Jane", ""],
        ["b@x.org", "Smith, Jane", "Janet"],
        ["c@x.org", "Cher", ""],
      ],
    );
    expect(rows.map(personOf)).toEqual([
      { email: "a@x.org", firstName: "Jane", lastName: "Smith" },
      { email: "b@x.org", firstName: "Janet", lastName: "Smith" },
      { email: "c@x.org", firstName: "Cher" },
    ]);
  });
});

describe("consent", () => {
  it("takes its polarity from the header: yes opts out under 'Opted Out', consents under 'Subscribed'", () => {
    expect(consentPolarity(normalizeHeader("Opted Out"))).toBe("opt-out");
    expect(consentPolarity(normalizeHeader("Unsubscribed"))).toBe("opt-out");
    expect(consentPolarity(normalizeHeader("Newsletter Subscribed"))).toBe("consent");
    expect(consentPolarity(normalizeHeader("Status"))).toBe("opt-out");
  });

  /** isOptedOut of each value in a column of that header, under a job that allows opting in. */
  function optedOut(header: string, values: readonly string[]) {
    const columns = [
      { column: "Email", to: "email" },
      { column: header, to: "isOptedOut" },
    ];
    const rows = mapRows(
      ["Email", header],
      { optIn: "allow", columns },
      values.map((v, i) => [`p${i}@x.org`, v]),
    );
    return rows.map((r) => personOf(r).isOptedOut);
  }

  it("reads yes and no by the column's polarity, and words of their own meaning alike in any column", () => {
    expect(optedOut("Subscribed", ["yes", "no", "Unsubscribed", "opted in"])).toEqual([
      false,
      true,
      true,
      false,
    ]);
    expect(optedOut("Opted Out", ["yes", "no", "Unsubscribed", "opted in"])).toEqual([
      true,
      false,
      true,
      false,
    ]);
  });

  it("holds a 'not opted out' back unless the job allows opting in, and warns of a word that says nothing", () => {
    const rows = mapRows(
      ["Email", "Opted Out"],
      {
        columns: [
          { column: "Email", to: "email" },
          { column: "Opted Out", to: "isOptedOut" },
        ],
      },
      [
        ["a@x.org", "no"],
        ["b@x.org", "cleaned"],
      ],
    );
    expect(rows[0]).toEqual({
      ok: true,
      person: { email: "a@x.org" },
      key: "a@x.org",
      population: null,
      optInHeldBack: true,
    });
    expect(rows[1]).toMatchObject({
      ok: true,
      person: { email: "b@x.org" },
      dropped: [{ field: "isOptedOut", code: "consent_unstated" }],
    });
  });
});

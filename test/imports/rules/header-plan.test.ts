import { describe, expect, it } from "vitest";
import { HeaderLookup, planColumns } from "../../../src/imports/rules/index.ts";
import { job, mapRows, personOf } from "./jobs.ts";

// The header plan alone: a header row and a job's mapping in, a column plan out.

function planned(headers: readonly string[], extra: Record<string, unknown>) {
  return planColumns(headers, job(extra)).columns.map((c) => ({
    index: c.index,
    to: c.to,
    source: c.source,
  }));
}

function refusal(headers: readonly string[], extra: Record<string, unknown>) {
  try {
    planColumns(headers, job(extra));
  } catch (err) {
    return { code: (err as { code?: string }).code, message: (err as Error).message };
  }
  throw new Error("the plan was made");
}

describe("a repeated header", () => {
  const headers = ["Email", "Name", "Email"];

  it("is refused by name alone, naming both columns and how to say which", () => {
    expect(refusal(headers, { columns: [{ column: "Email", to: "email" }] })).toEqual({
      code: "file_duplicate_header",
      message:
        'the header "Email" (columns.0) appears in columns 1, 3: say which with occurrence: 1 to 2 (the first is 1), or position: 1 or 3',
    });
  });

  it("is found by occurrence or by position", () => {
    expect(
      planned(headers, {
        columns: [
          { column: "Email", occurrence: 2, to: "email" },
          { position: 1, to: "additionalEmails" },
        ],
      }),
    ).toEqual([
      { index: 2, to: "email", source: "definition" },
      { index: 0, to: "additionalEmails", source: "definition" },
    ]);
  });

  it("refuses an occurrence the file does not have, and a position whose label is another header", () => {
    expect(refusal(headers, { columns: [{ column: "Email", occurrence: 3, to: "email" }] })).toEqual({
      code: "file_missing_column",
      message:
        'columns.0 names occurrence 3 of "Email", and the file has 2 columns of that name (column 1, 3)',
    });
    expect(refusal(headers, { columns: [{ column: "Name", position: 3, to: "email" }] }).message).toBe(
      'columns.0 names column 3 "Name", and the file\'s column 3 is headed "Email": fix the position or the label',
    );
  });

  it("is listed unmapped with its column's number", () => {
    const plan = planColumns([...headers, "Phone"], job({ columns: [{ position: 1, to: "email" }] }));
    expect(plan.unmapped).toEqual(["Name", "Email (column 3)", "Phone"]);
  });
});

describe("a preset", () => {
  it("takes the person's own column of a repeated header, the first, and leaves the company's", () => {
    const headers = ["Email", "First Name", "Phone Number", "Company Name", "Phone Number"];
    const plan = planColumns(headers, job({ preset: "hubspot" }));
    expect(plan.columns.map((c) => [c.index, c.to])).toEqual([
      [0, "email"],
      [1, "firstName"],
      [2, "phone"],
    ]);
    expect(plan.unmapped).toEqual(["Company Name", "Phone Number (column 5)"]);
  });

  it("fills a list field from every synonym present and a one-value field from the first", () => {
    const headers = ["Email", "Phone", "Business Phone", "Mobile", "Home Phone"];
    expect(planned(headers, { preset: "salesforce" })).toEqual([
      { index: 0, to: "email", source: "preset" },
      { index: 1, to: "phone", source: "preset" },
      { index: 3, to: "additionalPhones", source: "preset" },
      { index: 4, to: "additionalPhones", source: "preset" },
    ]);
  });

  it("leaves a field to the job's own column for it", () => {
    const [mapped] = mapRows(
      ["Email", "Work Email"],
      { preset: "hubspot", columns: [{ column: "Work Email", to: "email" }] },
      [["home@x.org", "work@x.org"]],
    );
    expect(personOf(mapped)).toEqual({ email: "work@x.org" });
  });

  it("without a column for the identifier, stops the run naming the headers that would have served", () => {
    expect(refusal(["First Name", "Phone"], { preset: "hubspot" })).toEqual({
      code: "file_missing_identifier",
      message:
        'no column for the identifier email: preset hubspot expects one of the columns "Email", "Email Address", "E-mail", "E-mail Address", "Primary Email"; the file\'s headers are: First Name, Phone',
    });
  });
});

describe("the header row", () => {
  it("drops an empty last header (a delimiter after every cell) and names an empty one by its number", () => {
    expect(new HeaderLookup(["Email", " ", "Name", ""], true).headers).toEqual(["Email", "column2", "Name"]);
  });

  it("matches names ignoring case, spaces, punctuation and accents", () => {
    const lookup = new HeaderLookup(["E-Mail Address", "Prénom", "e mail address"], true);
    expect(lookup.all("email address")).toEqual([0, 2]);
    expect(lookup.only("PRENOM", "columns.1")).toBe(1);
  });

  it("lists the job's ignored columns apart from the unmapped ones", () => {
    const plan = planColumns(
      ["Email", "Owner", "Owner", "Notes"],
      job({ columns: [{ column: "Email", to: "email" }], ignoreColumns: ["owner"] }),
    );
    expect(plan.ignored).toEqual(["Owner", "Owner"]);
    expect(plan.unmapped).toEqual(["Notes"]);
  });

  it("sends the unmapped columns as text properties when the job says so", () => {
    const [mapped] = mapRows(
      ["Email", "Team"],
      { columns: [{ column: "Email", to: "email" }], unmapped: "properties" },
      [["a@x.org", "Blue"]],
    );
    expect(personOf(mapped).properties).toEqual([{ name: "Team", propertyType: "STRING", value: "Blue" }]);
  });

  it("reads the population column's values trimmed and in any case", () => {
    const rows = mapRows(
      ["Email", "Cohort"],
      {
        columns: [{ column: "Email", to: "email" }],
        target: { studyId: "study_1", population: { column: "Cohort", values: { "Wave A": "pop_a" } } },
      },
      [
        ["a@x.org", " wave a "],
        ["b@x.org", "Wave B"],
      ],
    );
    expect(rows[0]).toMatchObject({ ok: true, population: "pop_a" });
    expect(rows[1]).toMatchObject({ ok: false, issues: [{ code: "unknown_population", row: 3 }] });
  });
});

import { describe, expect, it } from "vitest";
import { mayHoldSeveral, saysNoValue, splitValues } from "../../../src/imports/rules/index.ts";
import { mapRows, personOf } from "./jobs.ts";

// Reading a cell alone: the values it holds, and the words that mean it holds none.

describe("a cell of several values", () => {
  it("splits emails at ' ::: ' (Google), ';' and ','", () => {
    expect(splitValues("a@x.org ::: b@x.org; c@x.org, d@x.org", false)).toEqual([
      "a@x.org",
      "b@x.org",
      "c@x.org",
      "d@x.org",
    ]);
  });

  it("splits phones at a comma only before a number of its own, keeping an extension or a pause", () => {
    expect(splitValues("+49 30 1234,5 ::: +49 151 5550211, +49 30 5550210", true)).toEqual([
      "+49 30 1234,5",
      "+49 151 5550211",
      "+49 30 5550210",
    ]);
  });

  it("drops empty values and costs one test for a cell of one value", () => {
    expect(splitValues(" ;a@x.org;; ::: ", false)).toEqual(["a@x.org"]);
    expect(mayHoldSeveral("ann@example.org")).toBe(false);
    expect(mayHoldSeveral("+1 415 555 0132;+1 415 555 0133")).toBe(true);
  });

  it("gives the field its first value and the additional list the others, without repeats", () => {
    const [row] = mapRows(
      ["Email", "Phone"],
      {
        columns: [
          { column: "Email", to: "email" },
          { column: "Phone", to: "phone", transforms: ["phone"] },
        ],
      },
      [["a@x.org ::: b@x.org; a@x.org", "+49 30 1234567 ::: +49 151 5550211"]],
    );
    expect(personOf(row)).toEqual({
      email: "a@x.org",
      additionalEmails: ["b@x.org"],
      phone: "+49301234567",
      additionalPhones: ["+491515550211"],
    });
  });

  it("imports a row by its valid number when the cell's first one fails, listing the one left out", () => {
    const [row] = mapRows(
      ["Email", "Phone"],
      {
        target: { studyId: "study_1", identifier: "phone" },
        columns: [{ column: "Phone", to: "phone", transforms: ["phone"] }],
      },
      [["", "+91 9143 ::: +91 98765 43210"]],
    );
    expect(row).toMatchObject({
      ok: true,
      person: { phone: "+919876543210" },
      dropped: [{ field: "phone", column: "Phone", code: "invalid_phone" }],
    });
  });
});

describe("a cell that says it holds nothing", () => {
  it("is null, nil, none, n/a, na, #N/A or dashes, in any case", () => {
    for (const word of ["null", "NULL", "nil", "None", "n/a", "N/A", "na", "#N/A", "-", "---", " null "]) {
      expect(saysNoValue(word), word).toBe(true);
    }
    for (const word of ["Nina", "nullable", "a-b", "", "n/a n/a"])
      expect(saysNoValue(word), word).toBe(false);
  });

  it("is an empty email or phone cell, not an invalid one; elsewhere it is a value", () => {
    const def = {
      columns: [
        { column: "Email", to: "email" },
        { column: "Phone", to: "phone", transforms: ["phone"] },
        { column: "First", to: "firstName" },
      ],
    };
    const [noEmail, noPhone] = mapRows(["Email", "Phone", "First"], def, [
      ["null", "+49 30 1234567", "Ann"],
      ["a@x.org", "n/a", "None"],
    ]);
    expect(noEmail).toMatchObject({
      ok: false,
      issues: [{ code: "missing_identifier", message: "Email: empty, and it is the identifier (email)" }],
    });
    expect(noPhone).toEqual({
      ok: true,
      person: { email: "a@x.org", firstName: "None" },
      key: "a@x.org",
      population: null,
    });
  });
});

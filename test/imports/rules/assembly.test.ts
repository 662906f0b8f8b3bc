import { describe, expect, it } from "vitest";
import { assemblePerson } from "../../../src/imports/rules/index.ts";
import { mapRows, personOf, rowPlan } from "./jobs.ts";

// Assembling a person from a row's cells, before the contract's verdict on it.

const EMAILS = ["Email", "Work", "Other"];
const SEVERAL = {
  columns: [
    { column: "Email", to: "email" },
    { column: "Work", to: "email" },
    { column: "Other", to: "additionalEmails" },
  ],
};

describe("assembling a person", () => {
  it("puts each cell in its field, list or property, properties in column order", () => {
    const plan = rowPlan(["Email", "Alt", "Team", "Member"], {
      target: { studyId: "study_1" },
      columns: [
        { column: "Email", to: "email", transforms: ["lowercase"] },
        { column: "Alt", to: "additionalEmails", transforms: ["split"] },
        { column: "Team", to: { name: "Team", propertyType: "STRING" } },
        { column: "Member", to: { propertyId: "prop_member" } },
      ],
    });
    const draft = assemblePerson(plan, ["Ann@X.org", "a@y.org;b@y.org", "Blue", "M-1"], 2);
    expect(draft.person).toEqual({ email: "ann@x.org", additionalEmails: ["a@y.org", "b@y.org"] });
    expect(draft.properties).toEqual([
      { name: "Team", propertyType: "STRING", value: "Blue" },
      { propertyId: "prop_member", value: "M-1" },
    ]);
    expect(draft.propHeaders).toEqual(["Team", "Member"]);
    expect(draft.problems).toBeUndefined();
  });

  it("gives a field of several columns their first valid value and lists the others once, ignoring case", () => {
    const [invalidFirst, sameTwice] = mapRows(EMAILS, SEVERAL, [
      ["not an address", "w@x.org", "o@x.org"],
      ["a@x.org", "A@X.org", ""],
    ]);
    expect(invalidFirst).toMatchObject({
      ok: true,
      person: { email: "w@x.org", additionalEmails: ["o@x.org"] },
      dropped: [{ field: "email", column: "Email", code: "invalid_format" }],
    });
    expect(personOf(sameTwice)).toEqual({ email: "a@x.org" });
  });

  it("refuses a list where a one-value field expects one value", () => {
    const plan = rowPlan(["Email", "First"], {
      invalidOptionalValues: "reject",
      columns: [
        { column: "Email", to: "email" },
        { column: "First", to: "firstName", transforms: ["split"] },
      ],
    });
    const draft = assemblePerson(plan, ["a@x.org", "Ann;Anna"], 4);
    expect(draft.problems?.issues).toEqual([
      { code: "invalid_type", path: ["firstName"], message: "First: expects one value, got a list", row: 4 },
    ]);
    expect(draft.problems?.blocking).toBe(1);
  });

  it("makes a failing cell the row's problem and goes on with the rest of the row", () => {
    const plan = rowPlan(["Email", "Date", "First"], {
      columns: [
        { column: "Email", to: "email" },
        { column: "Date", to: "lastContactDate", transforms: ["date"] },
        { column: "First", to: "firstName" },
      ],
    });
    const draft = assemblePerson(plan, ["a@x.org", "yesterday", "Ann"], 5);
    expect(draft.person).toEqual({ email: "a@x.org", firstName: "Ann" });
    expect(draft.problems?.dropped).toMatchObject([
      { field: "lastContactDate", column: "Date", code: "invalid_date" },
    ]);
  });
});

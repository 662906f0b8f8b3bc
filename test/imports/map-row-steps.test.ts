import { describe, expect, it } from "vitest";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import {
  assemblePerson,
  cellFailed,
  KIND_LIST,
  KIND_OPTED_OUT,
  KIND_PROPERTY,
  KIND_SCALAR,
  mapRow,
  planColumns,
  planRow,
  type RowPlan,
  readCell,
  resolvePopulation,
  unknownPopulation,
} from "../../src/imports/rules/index.ts";
import {
  type PersonDraft,
  settleRow,
  settleSchemaProblems,
} from "../../src/imports/rules/settle-problems.ts";

// Each step of the row mapper alone (plan, read a cell, assemble a person,
// resolve the population, settle problems), then the steps together.

const HEADERS = [
  "Email",
  "First",
  "Other Email",
  "Work Email",
  "Opted Out",
  "Company",
  "Member Id",
  "Cohort",
];

function definition(extra: Record<string, unknown> = {}): ImportJobDefinition {
  return ImportJobDefinition.parse({
    kind: "import",
    target: {
      studyId: "study_1",
      population: { column: "Cohort", values: { "Wave A": "pop_a", b: "pop_b" } },
    },
    columns: [
      { column: "Email", to: "email", transforms: ["lowercase"] },
      { column: "First", to: "firstName", empty: "null" },
      { column: "Other Email", to: "additionalEmails", transforms: ["split"] },
      { column: "Work Email", to: "additionalEmails" },
      { column: "Opted Out", to: "isOptedOut", transforms: ["boolean"] },
      { column: "Company", to: { name: "Company", propertyType: "STRING" } },
      { column: "Member Id", to: { propertyId: "prop_member" } },
    ],
    source: { maxFieldLength: 20 },
    ...extra,
  });
}

function plan(extra: Record<string, unknown> = {}): RowPlan {
  const def = definition(extra);
  return planRow(planColumns(HEADERS, def), def);
}

/** A row of HEADERS' width: email, first name, additional emails, work email, opted out, company, member id, cohort. */
function row(cells: Partial<Record<(typeof HEADERS)[number], string>>): string[] {
  return HEADERS.map((h) => cells[h] ?? "");
}

const stepOf = (p: RowPlan, header: string) => {
  const step = p.steps.find((s) => s.col.header === header);
  if (!step) throw new Error(`no step for ${header}`);
  return step;
};

describe("planRow", () => {
  it("settles each column's kind, field and property once, and the row's rules", () => {
    const p = plan({ invalidOptionalValues: "drop", optIn: "allow" });
    expect(p.steps.map((s) => [s.col.header, s.kind, s.field])).toEqual([
      ["Email", KIND_SCALAR, "email"],
      ["First", KIND_SCALAR, "firstName"],
      ["Other Email", KIND_LIST, "additionalEmails"],
      ["Work Email", KIND_LIST, "additionalEmails"],
      ["Opted Out", KIND_OPTED_OUT, "isOptedOut"],
      ["Company", KIND_PROPERTY, ""],
      ["Member Id", KIND_PROPERTY, ""],
    ]);
    expect(stepOf(p, "First").nullOnEmpty).toBe(true);
    expect(stepOf(p, "Email").nullOnEmpty).toBe(false);
    expect(stepOf(p, "Company")).toMatchObject({ propertyName: "Company", propertyType: "STRING" });
    expect(stepOf(p, "Member Id").propertyId).toBe("prop_member");
    expect(p).toMatchObject({
      width: 8,
      maxFieldLength: 20,
      identifier: "email",
      dropInvalid: true,
      allowOptIn: true,
    });
    expect(p.fieldHeader.get("email")).toBe("Email");
    expect(p.fieldHeader.get("property:prop_member")).toBe("Member Id");
  });

  it("drops invalid optional values and holds back by default; reject when the job says so", () => {
    const p = plan();
    expect(p.dropInvalid).toBe(true);
    expect(p.allowOptIn).toBe(false);
    expect(plan({ invalidOptionalValues: "reject" }).dropInvalid).toBe(false);
  });
});

describe("readCell", () => {
  const p = plan();

  it("trims and transforms a value", () => {
    expect(readCell(stepOf(p, "Email"), "  Ann@Example.ORG ", 20)).toBe("ann@example.org");
    expect(readCell(stepOf(p, "Other Email"), "a@x.org; b@x.org", 50)).toEqual(["a@x.org", "b@x.org"]);
  });

  it("leaves an empty cell out, or sends null for an empty: null column", () => {
    expect(readCell(stepOf(p, "Email"), "   ", 20)).toBeUndefined();
    expect(readCell(stepOf(p, "First"), "", 20)).toBeNull();
    // What the transforms leave empty is empty too.
    expect(readCell(stepOf(p, "Other Email"), " ; ", 20)).toBeUndefined();
  });

  it("fails a cell that is too long, before trimming, without quoting it", () => {
    const read = readCell(stepOf(p, "First"), `${"x".repeat(19)}  `, 20);
    expect(cellFailed(read)).toBe(true);
    expect(read).toMatchObject({
      code: "field_too_long",
      message: "value is 21 characters long; the limit is 20",
    });
    expect(readCell(stepOf(p, "First"), "x".repeat(20), 20)).toBe("x".repeat(20));
  });

  it("fails control characters (a wrong encoding)", () => {
    expect(readCell(stepOf(p, "First"), "An\u0001n", 20)).toMatchObject({ code: "invalid_characters" });
    expect(readCell(stepOf(p, "First"), "Ann\tLee", 20)).toBe("Ann\tLee");
  });

  it("passes a transform's failure on", () => {
    expect(readCell(stepOf(p, "Opted Out"), "perhaps", 20)).toMatchObject({ code: "not_boolean", path: [] });
  });

  it("does not take null or a value for a failure", () => {
    expect(cellFailed(null)).toBe(false);
    expect(cellFailed(undefined)).toBe(false);
    expect(cellFailed(["a"])).toBe(false);
    expect(cellFailed(false)).toBe(false);
  });
});

describe("assemblePerson", () => {
  it("puts each cell in its field, list or property, in column order", () => {
    const d = assemblePerson(
      plan({ optIn: "allow" }),
      row({
        Email: "Ann@x.org",
        First: "Ann",
        "Other Email": "a@x.org;b@x.org",
        "Work Email": "w@x.org",
        "Opted Out": "yes",
        Company: "Acme",
        "Member Id": "m1",
      }),
      2,
    );
    expect(d.problems).toBeUndefined();
    expect(d.person).toEqual({
      email: "ann@x.org",
      firstName: "Ann",
      additionalEmails: ["a@x.org", "b@x.org", "w@x.org"],
      isOptedOut: true,
    });
    expect(d.properties).toEqual([
      { name: "Company", propertyType: "STRING", value: "Acme" },
      { propertyId: "prop_member", value: "m1" },
    ]);
    expect(d.propHeaders).toEqual(["Company", "Member Id"]);
    expect(d.heldBack).toBe(false);
  });

  it("holds back a 'not opted out' unless the job allows opting in", () => {
    const held = assemblePerson(plan(), row({ Email: "a@x.org", "Opted Out": "no" }), 2);
    expect(held.heldBack).toBe(true);
    expect(held.person).not.toHaveProperty("isOptedOut");
    const allowed = assemblePerson(plan({ optIn: "allow" }), row({ Email: "a@x.org", "Opted Out": "no" }), 2);
    expect(allowed.heldBack).toBe(false);
    expect(allowed.person.isOptedOut).toBe(false);
  });

  it("sends null for an empty: null column and leaves other empty cells out", () => {
    const d = assemblePerson(plan(), row({ Email: "a@x.org" }), 2);
    expect(d.person).toEqual({ email: "a@x.org", firstName: null });
    expect(d.properties).toBeUndefined();
  });

  it("notes a failing cell as the row's problem, names its column, and goes on", () => {
    const d = assemblePerson(
      plan({ invalidOptionalValues: "reject" }),
      row({ Email: "a@x.org", First: "x".repeat(30), Company: "Acme" }),
      7,
    );
    expect(d.problems?.blocking).toBe(1);
    expect(d.problems?.issues).toEqual([
      {
        code: "field_too_long",
        path: ["firstName"],
        message: "First: value is 30 characters long; the limit is 20",
        row: 7,
      },
    ]);
    expect(d.properties).toEqual([{ name: "Company", propertyType: "STRING", value: "Acme" }]);
  });

  it("under drop, a failing optional cell is a value left out, not a blocking problem", () => {
    const d = assemblePerson(
      plan({ invalidOptionalValues: "drop" }),
      row({ Email: "a@x.org", First: "x".repeat(30) }),
      3,
    );
    expect(d.problems?.blocking).toBe(0);
    expect(d.problems?.dropped).toEqual([
      {
        field: "firstName",
        column: "First",
        code: "field_too_long",
        path: ["firstName"],
        message: "value is 30 characters long; the limit is 20",
      },
    ]);
  });

  it("under drop, a failing identifier still blocks", () => {
    const d = assemblePerson(plan({ invalidOptionalValues: "drop" }), row({ Email: "x".repeat(30) }), 3);
    expect(d.problems?.blocking).toBe(1);
    expect(d.problems?.dropped).toEqual([]);
  });
});

describe("resolvePopulation", () => {
  const pop = plan().population;
  const at = (cohort: string) => row({ Cohort: cohort });

  it("looks the cell up trimmed and in any case", () => {
    expect(resolvePopulation(pop, at("  wave a "))).toBe("pop_a");
    expect(resolvePopulation(pop, at("B"))).toBe("pop_b");
  });

  it("is undefined for an unlisted value without a default, and names the column", () => {
    expect(resolvePopulation(pop, at("wave c"))).toBeUndefined();
    expect(unknownPopulation(pop, plan().headers, 4)).toEqual({
      code: "unknown_population",
      path: ["population"],
      message: "Cohort: value not listed in target.population.values and no default",
      row: 4,
    });
  });

  it("takes the default, null included, for an unlisted value", () => {
    const withDefault = (d: string | null) =>
      plan({
        target: { studyId: "s", population: { column: "Cohort", values: { a: "pop_a" }, default: d } },
      }).population;
    expect(resolvePopulation(withDefault("pop_z"), at("other"))).toBe("pop_z");
    expect(resolvePopulation(withDefault(null), at("other"))).toBeNull();
  });

  it("gives the fixed population, or null for none", () => {
    expect(
      resolvePopulation(plan({ target: { studyId: "s", population: { id: "pop_f" } } }).population, at("b")),
    ).toBe("pop_f");
    expect(resolvePopulation(plan({ target: { studyId: "s" } }).population, at("b"))).toBeNull();
  });
});

describe("settleSchemaProblems", () => {
  it("under drop, takes a failing list item out of its list and a failing field out of the person", () => {
    const p = plan({ invalidOptionalValues: "drop" });
    const person: Record<string, unknown> = {
      email: "a@x.org",
      additionalEmails: ["ok@x.org", "bad", "ok2@x.org"],
      lastContactDate: "never",
    };
    const settled = settleSchemaProblems(
      p,
      person,
      [
        { code: "invalid_format", path: ["additionalEmails", 1], message: "Invalid email address" },
        { code: "invalid_format", path: ["lastContactDate"], message: "Invalid date" },
      ],
      undefined,
      [],
      5,
    );
    expect(settled.blocking).toBe(0);
    expect(person).toEqual({ email: "a@x.org", additionalEmails: ["ok@x.org", "ok2@x.org"] });
    // A field two columns feed is named after the last of them; one no column feeds, after itself.
    expect(settled.dropped.map((d) => [d.field, d.column])).toEqual([
      ["additionalEmails", "Work Email"],
      ["lastContactDate", "lastContactDate"],
    ]);
    expect(settled.issues[0]?.message).toBe("Work Email: Invalid email address");
  });

  it("blocks on the identifier, and then leaves the person as it was", () => {
    const p = plan({ invalidOptionalValues: "drop" });
    const person: Record<string, unknown> = { email: "bad", additionalEmails: ["bad"] };
    const settled = settleSchemaProblems(
      p,
      person,
      [
        { code: "invalid_format", path: ["email"], message: "Invalid email address" },
        { code: "invalid_format", path: ["additionalEmails", 0], message: "Invalid email address" },
      ],
      undefined,
      [],
      5,
    );
    expect(settled.blocking).toBe(1);
    expect(person).toEqual({ email: "bad", additionalEmails: ["bad"] });
  });

  it("under reject, every problem blocks", () => {
    const person: Record<string, unknown> = { email: "a@x.org", lastContactDate: "never" };
    const settled = settleSchemaProblems(
      plan({ invalidOptionalValues: "reject" }),
      person,
      [{ code: "invalid_format", path: ["lastContactDate"], message: "Invalid date" }],
      undefined,
      [],
      5,
    );
    expect(settled.blocking).toBe(1);
    expect(settled.dropped).toEqual([]);
  });
});

describe("settleRow", () => {
  const draft = (over: Partial<PersonDraft>): PersonDraft => ({
    person: {},
    properties: undefined,
    propHeaders: undefined,
    problems: undefined,
    heldBack: false,
    ...over,
  });

  it("makes a person with its key, population and properties", () => {
    const mapped = settleRow(
      plan(),
      draft({
        person: { email: "Ann@X.org" },
        properties: [{ propertyId: "prop_member", value: "m1" }],
        heldBack: true,
      }),
      "pop_a",
      2,
    );
    expect(mapped).toEqual({
      ok: true,
      person: { email: "Ann@X.org", properties: [{ propertyId: "prop_member", value: "m1" }] },
      key: "ann@x.org",
      population: "pop_a",
      optInHeldBack: true,
    });
  });

  it("rejects a row with a blocking problem before checking the person", () => {
    const issue = {
      code: "field_too_long" as const,
      path: ["firstName"],
      message: "First: too long",
      row: 2,
    };
    const mapped = settleRow(
      plan(),
      draft({ person: { email: "a@x.org" }, problems: { issues: [issue], dropped: [], blocking: 1 } }),
      null,
      2,
    );
    expect(mapped).toEqual({ ok: false, issues: [issue] });
  });

  it("rejects a person the contract refuses, naming the column", () => {
    const mapped = settleRow(plan(), draft({ person: { email: "not an email" } }), null, 9);
    expect(mapped.ok).toBe(false);
    if (mapped.ok) return;
    expect(mapped.issues).toHaveLength(1);
    expect(mapped.issues[0]).toMatchObject({ path: ["email"], row: 9 });
    expect(mapped.issues[0]?.message).toMatch(/^Email: /);
  });

  it("rejects a person without the identifier, with the values drop would have left out", () => {
    const p = plan({ invalidOptionalValues: "drop" });
    const dropped = {
      code: "field_too_long" as const,
      path: ["firstName"],
      message: "First: too long",
      row: 3,
    };
    const mapped = settleRow(
      p,
      draft({
        person: { firstName: "Ann" },
        problems: {
          issues: [dropped],
          dropped: [
            {
              code: "field_too_long",
              path: ["firstName"],
              message: "too long",
              field: "firstName",
              column: "First",
            },
          ],
          blocking: 0,
        },
      }),
      null,
      3,
    );
    expect(mapped).toEqual({
      ok: false,
      issues: [
        dropped,
        {
          code: "missing_identifier",
          path: ["email"],
          message: "Email: empty, and it is the identifier (email)",
          row: 3,
        },
      ],
    });
  });

  it("keys a property identifier by its value", () => {
    const p = plan({ target: { studyId: "s", identifier: "property:prop_member" } });
    const mapped = settleRow(p, draft({ properties: [{ propertyId: "prop_member", value: "m1" }] }), null, 2);
    expect(mapped).toMatchObject({ ok: true, key: "m1" });
    const missing = settleRow(p, draft({ person: { email: "a@x.org" } }), null, 2);
    expect(missing).toMatchObject({
      ok: false,
      issues: [
        {
          code: "missing_identifier",
          message: "Member Id: empty, and it is the identifier (property prop_member)",
        },
      ],
    });
  });

  it("under drop, imports the person and lists what was left out", () => {
    const dropped = [
      {
        code: "field_too_long" as const,
        path: ["firstName"],
        message: "too long",
        field: "firstName",
        column: "First",
      },
    ];
    const mapped = settleRow(
      plan({ invalidOptionalValues: "drop" }),
      draft({
        person: { email: "a@x.org" },
        problems: {
          issues: [{ code: "field_too_long", path: ["firstName"], message: "First: too long", row: 2 }],
          dropped,
          blocking: 0,
        },
      }),
      null,
      2,
    );
    expect(mapped).toEqual({
      ok: true,
      person: { email: "a@x.org" },
      key: "a@x.org",
      population: null,
      dropped,
    });
  });
});

describe("mapRow, the steps together", () => {
  it("rejects a row of more cells than the header whole, and a line without a delimiter", () => {
    expect(mapRow(plan(), [...row({ Email: "a@x.org" }), "x", "y"], 2)).toEqual({
      ok: false,
      issues: [{ code: "ragged_row", path: [], message: "row has 10 cells, the header has 8", row: 2 }],
    });
    // A report's footer ("Confidential Information - Do Not Distribute") is not a row with its first cell filled.
    expect(mapRow(plan(), ["a@x.org"], 3)).toEqual({
      ok: false,
      issues: [{ code: "ragged_row", path: [], message: "row has 1 cells, the header has 8", row: 3 }],
    });
  });

  it("reads a row of fewer cells as if the missing trailing cells were empty", () => {
    // Issue 30: Outlook and Google's Outlook CSV leave out the empty cells at the end of a row.
    expect(mapRow(plan({ target: { studyId: "study_1" } }), ["A@x.org", "Ann"], 2)).toEqual({
      ok: true,
      person: { email: "a@x.org", firstName: "Ann" },
      key: "a@x.org",
      population: null,
    });
  });

  it("fails a short row on the identifier when its column is among the missing cells, saying so", () => {
    const def = ImportJobDefinition.parse({
      kind: "import",
      target: { studyId: "study_1" },
      columns: [
        { column: "First", to: "firstName" },
        { column: "Work Email", to: "email" },
      ],
    });
    expect(mapRow(planRow(planColumns(HEADERS, def), def), ["a@x.org", "Ann"], 2)).toEqual({
      ok: false,
      issues: [
        {
          code: "missing_identifier",
          path: ["email"],
          message:
            "Work Email: not in the row (it has 2 cells, the header has 8), and it is the identifier (email)",
          row: 2,
        },
      ],
    });
  });

  it("rejects an unknown population with the row's other problems", () => {
    const mapped = mapRow(plan(), row({ Email: "a@x.org", First: "x".repeat(30), Cohort: "nope" }), 2);
    expect(mapped.ok).toBe(false);
    if (mapped.ok) return;
    expect(mapped.issues.map((i) => i.code)).toEqual(["field_too_long", "unknown_population"]);
  });

  it("maps a row to a person in its population", () => {
    expect(mapRow(plan(), row({ Email: "A@X.org", First: "Ann", Cohort: "b" }), 2)).toEqual({
      ok: true,
      person: { email: "a@x.org", firstName: "Ann" },
      key: "a@x.org",
      population: "pop_b",
    });
  });
});

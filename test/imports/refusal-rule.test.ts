import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { refusesFile } from "../../src/imports/refusal-rule.ts";
import { dryRun, type Scratch, scratch } from "./fixtures.ts";

const define = () =>
  ImportJobDefinition.parse({
    kind: "import",
    target: { studyId: "study_1" },
    columns: [{ column: "Email", to: "email" }],
  });

describe("when a file is refused before anything is sent", () => {
  it("judges the rows that have an identifier, and refuses a file where almost none has one", () => {
    // Half the people have no email: they cannot be imported, but nothing says the mapping is wrong.
    expect(refusesFile({ rowsRead: 500, rejected: 292, missingIdentifier: 290 })).toBe(false);
    // Of the rows with an email, most are not emails: the wrong column.
    expect(refusesFile({ rowsRead: 500, rejected: 320, missingIdentifier: 100 })).toBe(true);
    // No row has the identifier: the wrong column too.
    expect(refusesFile({ rowsRead: 500, rejected: 500, missingIdentifier: 500 })).toBe(true);
    // Too few named rows to judge.
    expect(refusesFile({ rowsRead: 150, rejected: 120, missingIdentifier: 80 })).toBe(false);
    expect(refusesFile({ rowsRead: 99, rejected: 99, missingIdentifier: 0 })).toBe(false);
  });

  let s: Scratch;
  beforeEach(async () => {
    s = await scratch();
  });
  afterEach(async () => {
    await s.cleanup();
  });

  it("imports the people of a CRM export where most rows have no email", async () => {
    const lines = ["Email,Name"];
    for (let i = 0; i < 500; i++) lines.push(i % 5 < 2 ? `p${i}@example.org,P${i}` : `,N${i}`);
    const file = await s.file("half-without-email.csv", `${lines.join("\n")}\n`);
    const { report } = await dryRun(s, file, define());
    expect(report.wouldBeRefused).toBeUndefined();
    expect(report).toMatchObject({ rowsRead: 500, imported: 200, rejected: 300 });
  });

  it("still refuses a file whose identifier column is empty on every row", async () => {
    const lines = ["Email,Name"];
    for (let i = 0; i < 200; i++) lines.push(`,N${i}`);
    const file = await s.file("no-email.csv", `${lines.join("\n")}\n`);
    const { report } = await dryRun(s, file, define());
    expect(report.wouldBeRefused).toMatch(
      /^a real run would be refused \(import_mostly_rejected\): 200 of the first 200/,
    );
  });
});

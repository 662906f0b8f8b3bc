import { readFile } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { dryRun, type Scratch, scratch } from "./fixtures.ts";

// Several columns `to: phone` (mobile, office, home) or `to: email` (issue 30): the first valid value of
// a row, in the order the columns are listed, is the field, the others its additional list. Synthetic data.

let s: Scratch;
beforeEach(async () => {
  s = await scratch();
});
afterEach(async () => {
  await s.cleanup();
});

const PHONES = [
  "Name,E-Mail,Mobil,Büro,Privat",
  "Ada,ada@example.org,0151 23456789,030 1234567,",
  "Bo,,,030 7654321,040 1234567",
  "Cy,,kein Anschluss,,030 1112223",
  "Di,di@example.org,,,",
  "Fe,,kein Anschluss,,",
  "Gus,,0151 9999999,+49 151 9999999,0151 9999999 ::: 040 5555555",
  "",
].join("\n");

function byPhone(extra: Record<string, unknown> = {}): ImportJobDefinition {
  return ImportJobDefinition.parse({
    kind: "import",
    target: { studyId: "study_1", identifier: "phone" },
    phoneCountry: "DE",
    columns: [
      { column: "Name", to: "firstName" },
      { column: "E-Mail", to: "email" },
      { column: "Mobil", to: "phone", transforms: ["phone"] },
      { column: "Büro", to: "phone", transforms: ["phone"] },
      { column: "Privat", to: "phone", transforms: ["phone"] },
    ],
    ...extra,
  });
}

describe("several columns to: phone, phone the identifier", () => {
  const outcomes: unknown[] = [];
  for (const worker of [false, true]) {
    it(`take the first valid number, the rest to additionalPhones without repeats${worker ? " (parse thread)" : ""}`, async () => {
      const file = await s.file(`phones-${worker}.csv`, PHONES);
      const { report, people, rejects } = await dryRun(s, file, byPhone(), worker);
      expect(people).toEqual([
        {
          firstName: "Ada",
          email: "ada@example.org",
          phone: "+4915123456789",
          additionalPhones: ["+49301234567"],
        },
        { firstName: "Bo", phone: "+49307654321", additionalPhones: ["+49401234567"] },
        // An invalid number in one of them is an optional value: left out, the next column's taken.
        { firstName: "Cy", phone: "+49301112223" },
        { firstName: "Gus", phone: "+491519999999", additionalPhones: ["+49405555555"] },
      ]);
      expect(rejects.slice(1).map((r) => [r[0], r[1], r[2]])).toEqual([
        ["5", "Mobil, Büro, Privat: empty, and it is the identifier (phone)", "missing_identifier"],
        [
          "6",
          expect.stringMatching(
            /^Mobil: .+; Mobil, Büro, Privat: no valid value, and it is the identifier \(phone\)$/,
          ),
          expect.stringMatching(/;missing_identifier$/),
        ],
      ]);
      expect(report).toMatchObject({ imported: 4, rejected: 2, droppedValues: 1, rowsWithDroppedValues: 1 });
      const warnings = await readFile(report.warningsFile as string, "utf8");
      expect(warnings).toMatch(/^4,phone,Mobil,/m);
      expect(warnings).not.toContain("kein Anschluss");
      outcomes.push({ people, rejects, report: { ...report, durationMs: 0 } });
    });
  }

  it("map alike on the parse thread and on the main thread", () => {
    const strip = (o: unknown) => {
      const { report, ...rest } = o as { report: Record<string, unknown> };
      const { rejectsFile, requestsFile, warningsFile, phasesMs, rowsPerSecond, startedAt, file, job, ...r } =
        report;
      return { ...rest, report: r };
    };
    expect(outcomes).toHaveLength(2);
    expect(strip(outcomes[1])).toEqual(strip(outcomes[0]));
  });

  it("reject the row for an invalid number under invalidOptionalValues: reject", async () => {
    const file = await s.file("phones-reject.csv", PHONES);
    const { people } = await dryRun(s, file, byPhone({ invalidOptionalValues: "reject" }));
    expect(people.map((p) => p.firstName)).toEqual(["Ada", "Bo", "Gus"]);
  });

  it("fill phone and additionalPhones when email is the identifier", async () => {
    const file = await s.file("phones-email.csv", PHONES);
    const def = byPhone({ target: { studyId: "study_1", identifier: "email" } });
    const { people, report } = await dryRun(s, file, def);
    expect(people).toEqual([
      {
        firstName: "Ada",
        email: "ada@example.org",
        phone: "+4915123456789",
        additionalPhones: ["+49301234567"],
      },
      { firstName: "Di", email: "di@example.org" },
    ]);
    expect(report.rejected).toBe(4);
  });
});

describe("several columns to: email", () => {
  it("take the first valid address, the others to additionalEmails, ignoring case", async () => {
    const file = await s.file(
      "emails.csv",
      [
        "Email,Work Email,Other Email,Name",
        "ada@example.org,ADA@example.org,ada@work.example.org,Ada",
        "not an address,bo@work.example.org,,Bo",
        ",,cy@example.org,Cy",
        ",,,Di",
        "",
      ].join("\n"),
    );
    const def = ImportJobDefinition.parse({
      kind: "import",
      target: { studyId: "study_1" },
      columns: [
        { column: "Email", to: "email" },
        { column: "Work Email", to: "email" },
        { column: "Other Email", to: "email" },
      ],
    });
    const { people, rejects, report } = await dryRun(s, file, def);
    expect(people).toEqual([
      // Ada's work address is her first in another case: one address.
      { email: "ada@example.org", additionalEmails: ["ada@work.example.org"] },
      { email: "bo@work.example.org" },
      { email: "cy@example.org" },
    ]);
    expect(rejects.slice(1).map((r) => r[1])).toEqual([
      "Email, Work Email, Other Email: empty, and it is the identifier (email)",
    ]);
    expect(report.droppedByField).toEqual({ email: { "Invalid email address": 1 } });
  });
});

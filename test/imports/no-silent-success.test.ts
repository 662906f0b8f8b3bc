import { execFile } from "node:child_process";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { parse } from "csv-parse/sync";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ImportJobDefinition, type ImportJobDefinitionInput } from "../../src/config/import-job.ts";
import { ImportFileError, type ImportReport, runImport } from "../../src/imports/index.ts";
import { MissingIdentifierError } from "../../src/imports/missing-identifier-error.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import { dryRun, type Scratch, scratch } from "./fixtures.ts";
import { ROOT, sample } from "./helpers.ts";

const run = promisify(execFile);
const bin = path.join(ROOT, "bin/recruit-sync.mjs");

const define = (input: Omit<ImportJobDefinitionInput, "kind">) =>
  ImportJobDefinition.parse({ kind: "import", ...input });

let emu: TestEmulator;
let s: Scratch;
beforeEach(async () => {
  emu = await startTestEmulator();
  s = await scratch();
});
afterEach(async () => {
  await emu.close();
  await s.cleanup();
});

/** A real run into the emulator, rejects and warnings in the scratch folder. */
function importInto(file: string, definition: ImportJobDefinition): Promise<ImportReport> {
  return runImport({
    file,
    definition,
    client: emu.client,
    rejectsFile: path.join(s.dir, "run.rejects.csv"),
    workDir: s.dir,
  });
}

const readCsv = async (file: string) => parse(await readFile(file)) as string[][];

describe("an import whose identifier has no column in the file", () => {
  it("fails before any request, naming the columns the preset expects and the headers found", async () => {
    const file = await s.file("no-email.csv", "Name,Phone Number\nAda,+14155550132\nBo,+14155550133\n");
    const definition = define({ preset: "hubspot", target: { studyId: "study_1" } });
    const attempt = importInto(file, definition);
    await expect(attempt).rejects.toBeInstanceOf(MissingIdentifierError);
    await expect(attempt).rejects.toBeInstanceOf(ImportFileError);
    await expect(attempt).rejects.toMatchObject({
      code: "file_missing_identifier",
      retryable: false,
      message:
        'no column for the identifier email: preset hubspot expects one of the columns "Email", "Email Address", "E-mail", "E-mail Address", "Primary Email"; the file\'s headers are: Name, Phone Number',
    });
    expect((await emu.requests()).total).toBe(0);
  });

  it("says that a file read without a header row has only numbered columns", async () => {
    const file = await s.file("headerless.csv", "ada@example.org,Ada\nbo@example.org,Bo\n");
    const definition = define({
      preset: "mailchimp",
      source: { header: false },
      target: { studyId: "study_1" },
    });
    await expect(importInto(file, definition)).rejects.toMatchObject({
      code: "file_missing_identifier",
      message: expect.stringContaining(
        "the file is read without a header row (source.header: false), so its columns are column1, column2: map one with columns: [{column: columnN",
      ),
    });
    expect((await emu.requests()).total).toBe(0);
  });

  it("exits 1 at the command line with one line on stderr", async () => {
    const redis: TestRedis = await withTestRedis();
    try {
      await mkdir(path.join(s.dir, "config"));
      await writeFile(
        path.join(s.dir, "config/default.yaml"),
        `service: { baseUrl: ${emu.baseUrl} }\nredis: { url: ${REDIS_URL}, prefix: ${redis.prefix} }\nwarehouse: { url: "file:./data" }\npaths: { jobsDir: ${path.join(ROOT, "jobs")}, dataDir: ./data }\n`,
      );
      const file = await s.file("crm.csv", "Full Name,Company\nAda Lovelace,Analytical\n");
      const outcome = await run(
        process.execPath,
        [bin, "import", file, "--preset", "hubspot", "--study", "study_1", "--inline", "--no-shared-budget"],
        {
          cwd: s.dir,
          env: {
            ...process.env,
            NODE_ENV: "",
            RECRUIT_SYNC_BASE_URL: emu.baseUrl,
            RECRUIT_SYNC_API_TOKEN: emu.token,
            REDIS_URL,
          },
        },
      ).then(
        () => ({ code: 0, stderr: "" }),
        (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
      );
      expect(outcome.code).toBe(1);
      expect(outcome.stderr.trim().split("\n")).toEqual([
        'recruit-sync: no column for the identifier email: preset hubspot expects one of the columns "Email", "Email Address", "E-mail", "E-mail Address", "Primary Email"; the file\'s headers are: Full Name, Company',
      ]);
      expect((await emu.requests()).total).toBe(0);
    } finally {
      await redis.cleanup();
    }
  });
});

describe("phone numbers without a default country", () => {
  it("points to --phone-country and phoneCountry in the reasons and in a report warning with the count", async () => {
    const definition = define({
      preset: "hubspot",
      target: { studyId: "study_1" },
      invalidOptionalValues: "reject",
    });
    const { report, rejects } = await dryRun(s, sample("hubspot-contacts.csv"), definition);
    const hint =
      "Phone Number: a national number (no +) and no default country: set the phone country (--phone-country, the console's Phone country, job key phoneCountry)";
    expect(report.rejectedByReason[hint]).toBe(4);
    // The number "12" is no phone in any country: its reason does not send anyone to --phone-country.
    expect(
      report.rejectedByReason["Phone Number: not a valid international phone number (no default country)"],
    ).toBe(1);
    expect(rejects.filter((r) => r[1]?.includes("--phone-country")).map((r) => r[0])).toEqual([
      "2",
      "4",
      "5",
      "8",
      "12",
    ]);
    expect(report.phonesWithoutCountry).toBe(7);
    expect(report.warnings).toContain(
      "7 phone numbers have no + and there is no default country to read them in (5 rows rejected for that alone): set the phone country, e.g. --phone-country US (the console's Phone country, job key phoneCountry)",
    );
  });

  it("says nothing about a default country when one is given", async () => {
    const definition = define({ preset: "hubspot", phoneCountry: "US", target: { studyId: "study_1" } });
    const { report } = await dryRun(s, sample("hubspot-contacts.csv"), definition);
    expect(report.phonesWithoutCountry).toBe(0);
    expect(report.warnings.join("\n")).not.toContain("--phone-country");
    expect(Object.keys(report.rejectedByReason).join("\n")).not.toContain("--phone-country");
  });
});

describe("invalid optional values under invalidOptionalValues: drop", () => {
  const csv = [
    "Email,First Name,Phone,Last Contacted,Code",
    "ada@example.org,Ada,020 7946 0958,2024-03-05,",
    "bo@example.org,Bo,+14155550133,2024-13-45,",
    "cy@example.org,Cy,12,2024-03-07,X1",
    "not-an-email,Di,+14155550134,2024-03-08,",
    "eve@example.org,Eve,+14155550135,2024-03-09,",
  ].join("\n");
  const columns = [
    { column: "Email", to: "email" as const },
    { column: "First Name", to: "firstName" as const },
    { column: "Phone", to: "phone" as const, transforms: ["phone" as const] },
    { column: "Last Contacted", to: "lastContactDate" as const, transforms: [{ date: "iso" }] },
    // Unknown to the service: a row with a code is refused by it after mapping.
    { column: "Code", to: { propertyId: "property_404" } },
  ];

  it("imports the people without them, counts them in the report and lists them in a private warnings file", async () => {
    const file = await s.file("drop.csv", `${csv}\n`);
    const definition = define({ target: { studyId: "study_1" }, columns, invalidOptionalValues: "drop" });
    const report = await importInto(file, definition);

    expect(report).toMatchObject({
      rowsRead: 5,
      imported: 3,
      rejected: 2,
      invalidOptionalValues: "drop",
      droppedValues: 2,
      rowsWithDroppedValues: 2,
      droppedByField: {
        phone: {
          "a national number (no +) and no default country: set the phone country (--phone-country, the console's Phone country, job key phoneCountry)": 1,
        },
        lastContactDate: { "not a date in the format iso": 1 },
      },
      warningsFile: path.join(s.dir, "run.warnings.csv"),
    });
    // The identifier still rejects; a row the service refused is a reject, not a warning.
    expect(report.rejectedByReason).toEqual({
      "Email: Invalid email address": 1,
      "service: properties.0.propertyId: Property not found": 1,
    });

    const warnings = await readCsv(report.warningsFile as string);
    expect(warnings).toEqual([
      ["row", "field", "column", "code", "reason"],
      [
        "2",
        "phone",
        "Phone",
        "phone_needs_country",
        "a national number (no +) and no default country: set the phone country (--phone-country, the console's Phone country, job key phoneCountry)",
      ],
      ["3", "lastContactDate", "Last Contacted", "invalid_date", "not a date in the format iso"],
    ]);
    const text = await readFile(report.warningsFile as string, "utf8");
    for (const value of ["020 7946 0958", "2024-13-45", "ada@example.org"]) expect(text).not.toContain(value);
    expect(((await stat(report.warningsFile as string)).mode & 0o777).toString(8)).toBe("600");

    const people = (await emu.snapshot()).people;
    const ada = people.find((p) => p.email === "ada@example.org");
    expect(ada).toMatchObject({ firstName: "Ada", lastContactDate: "2024-03-05" });
    expect(ada?.phone ?? null).toBeNull();
    const bo = people.find((p) => p.email === "bo@example.org");
    expect(bo).toMatchObject({ firstName: "Bo", phone: "+14155550133" });
    expect(bo?.lastContactDate ?? null).toBeNull();
    expect(people.some((p) => p.email === "cy@example.org")).toBe(false);
    expect(report.warnings).toContain(
      "1 phone number has no + and there is no default country to read it in (1 number left out of imported people): set the phone country, e.g. --phone-country US (the console's Phone country, job key phoneCountry)",
    );
  });

  it("drops them by default, and rejects the whole row under invalidOptionalValues: reject", async () => {
    const byDefault = await dryRun(
      s,
      await s.file("default.csv", `${csv}\n`),
      define({ target: { studyId: "study_1" }, columns }),
    );
    expect(byDefault.report).toMatchObject({ invalidOptionalValues: "drop", droppedValues: 3, rejected: 1 });
    const file = await s.file("reject.csv", `${csv}\n`);
    const definition = define({ target: { studyId: "study_1" }, columns, invalidOptionalValues: "reject" });
    const report = await importInto(file, definition);
    expect(report).toMatchObject({
      imported: 1,
      rejected: 4,
      invalidOptionalValues: "reject",
      droppedValues: 0,
      warningsFile: null,
    });
    const people = (await emu.snapshot()).people.map((p) => p.email);
    expect(people).toContain("eve@example.org");
    expect(people).not.toContain("ada@example.org");
  });
});

describe("what drop leaves out", () => {
  it("keeps the good items of a list, and treats the email as optional when the phone is the identifier", async () => {
    const file = await s.file(
      "phone-id.csv",
      [
        "Phone,Email,Other Emails,Notes",
        `+14155550140,bad@,one@example.org;nope;two@example.org,${"x".repeat(60)}`,
        "+14155550141,ok@example.org,,short",
        "not a phone,fine@example.org,,",
      ].join("\n"),
    );
    const definition = define({
      target: { studyId: "study_1", identifier: "phone" },
      source: { maxFieldLength: 40 },
      invalidOptionalValues: "drop",
      columns: [
        { column: "Phone", to: "phone", transforms: ["phone"] },
        { column: "Email", to: "email" },
        { column: "Other Emails", to: "additionalEmails", transforms: ["split"] },
        { column: "Notes", to: { name: "Notes", propertyType: "STRING" } },
      ],
    });
    const { report, people } = await dryRun(s, file, definition);
    expect(people).toEqual([
      { phone: "+14155550140", additionalEmails: ["one@example.org", "two@example.org"] },
      {
        phone: "+14155550141",
        email: "ok@example.org",
        properties: [{ name: "Notes", propertyType: "STRING", value: "short" }],
      },
    ]);
    // The identifier's own failure still rejects the row.
    expect(report.rejected).toBe(1);
    expect(Object.keys(report.droppedByField).sort()).toEqual([
      "additionalEmails",
      "email",
      'property "Notes"',
    ]);
    expect(report.droppedValues).toBe(3);
    const warnings = await readCsv(report.warningsFile as string);
    expect(warnings.slice(1).map((w) => [w[0], w[1], w[2], w[3]])).toEqual([
      ["2", 'property "Notes"', "Notes", "field_too_long"],
      ["2", "email", "Email", "invalid_format"],
      ["2", "additionalEmails", "Other Emails", "invalid_format"],
    ]);
  });
});

describe("the Salesforce preset", () => {
  it('maps "Email Opt Out" (0/1, true/false) to isOptedOut', async () => {
    const file = await s.file(
      "sf.csv",
      [
        "Contact ID,First Name,Email,Email Opt Out",
        "0031,Ann,ann@example.net,1",
        "0032,Ben,ben@example.net,0",
        "0033,Cat,cat@example.net,true",
        "0034,Dan,dan@example.net,FALSE",
        "0035,Eli,eli@example.net,",
      ].join("\n"),
    );
    const report = await importInto(file, define({ preset: "salesforce", target: { studyId: "study_2" } }));
    expect(report).toMatchObject({ imported: 5, rejected: 0 });
    expect(report.unmappedColumns).toEqual(["Contact ID"]);
    const optedOut = Object.fromEntries(
      (await emu.snapshot()).people
        .filter((p) => p.email?.endsWith("@example.net") && p.firstName)
        .map((p) => [p.firstName, p.isOptedOut]),
    );
    expect(optedOut).toMatchObject({ Ann: true, Ben: false, Cat: true, Dan: false });
  });

  it("rejects an opt-out cell that is not one of Salesforce's checkbox values", async () => {
    const file = await s.file("sf-bad.csv", "Email,Email Opt Out\nann@example.net,maybe\n");
    const { report } = await dryRun(
      s,
      file,
      define({ preset: "salesforce", target: { studyId: "study_2" }, invalidOptionalValues: "reject" }),
    );
    expect(report.rejectedByReason).toEqual({
      "Email Opt Out: not a yes/no value (accepted: 1, true, 0, false)": 1,
    });
  });
});

import { readFile } from "node:fs/promises";
import iconv from "iconv-lite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ImportJobDefinition, validateImportJobDefinition } from "../../src/config/import-job.ts";
import { formatSummary, ImportFileError } from "../../src/imports/index.ts";
import { dryRun, type Scratch, scratch } from "./fixtures.ts";

// Quirks of real exports (issue 30), each in a small synthetic file: no real person's data.

let s: Scratch;
beforeEach(async () => {
  s = await scratch();
});
afterEach(async () => {
  await s.cleanup();
});

function define(extra: Record<string, unknown>): ImportJobDefinition {
  return ImportJobDefinition.parse({ kind: "import", target: { studyId: "study_1" }, ...extra });
}

const emailAndName = [
  { column: "E-mail Address", to: "email" },
  { column: "First Name", to: "firstName" },
];

describe("a delimiter at the end of every row (Outlook CSV)", () => {
  for (const worker of [false, true]) {
    it(`reads rows of one more, empty cell as if it were not there${worker ? " (worker thread)" : ""}`, async () => {
      const file = await s.file(
        `trailing-${worker}.csv`,
        "First Name,Last Name,E-mail Address\nAda,Lovelace,ada@example.org,\nBo,Berg,bo@example.org, \n",
      );
      const { report, people } = await dryRun(s, file, define({ columns: emailAndName }), worker);
      expect(report.rejected).toBe(0);
      expect(people.map((p) => p.email)).toEqual(["ada@example.org", "bo@example.org"]);
      expect(report.unmappedColumns).toEqual(["Last Name"]);
    });
  }

  it("still rejects a row whose extra cell holds a value, saying so", async () => {
    const file = await s.file(
      "extra.csv",
      "First Name,E-mail Address\nAda,ada@example.org,\nBo,bo@example.org,oops\n",
    );
    const { report, rejects } = await dryRun(s, file, define({ columns: emailAndName }));
    expect(report.rejected).toBe(1);
    expect(rejects[1]?.slice(0, 2)).toEqual([
      "3",
      "row has 3 cells, the header has 2, and its last cell, which has no header, is not empty",
    ]);
  });

  it("takes a header that ends with a delimiter too, rows with or without the empty cell", async () => {
    const file = await s.file(
      "header-trailing.csv",
      "First Name,E-mail Address,\nAda,ada@example.org,\nBo,bo@example.org\nCy,cy@example.org,x\n",
    );
    const { report, people } = await dryRun(s, file, define({ columns: emailAndName }));
    expect(people.map((p) => p.email)).toEqual(["ada@example.org", "bo@example.org"]);
    expect(report.unmappedColumns).toEqual([]);
    expect(report.rejected).toBe(1);
  });
});

describe("a byte-order mark", () => {
  const bom = Buffer.from([0xef, 0xbb, 0xbf]);

  it("that lies (UTF-8 mark, Windows-1252 text) is found, dropped, and the report says so", async () => {
    const body = iconv.encode(
      "First Name,E-mail Address\nZoë,zoe@example.org\nJosé,jose@example.org\n",
      "windows-1252",
    );
    const { report, people, rejects } = await dryRun(
      s,
      await s.file("lying-bom.csv", Buffer.concat([bom, body])),
      define({ columns: emailAndName }),
    );
    expect(report.encoding).toBe("windows-1252");
    expect(people.map((p) => p.firstName)).toEqual(["Zoë", "José"]);
    expect(rejects).toEqual([]);
    expect(report.warnings).toContain(
      "the file starts with a UTF-8 byte-order mark, but its text is not UTF-8: read as windows-1252, the mark dropped",
    );
  });

  it("that lies after 64 KB of plain ASCII is found by the whole-file check", async () => {
    const rows = ["First Name,E-mail Address"];
    for (let i = 0; rows.join("\n").length < 70_000; i++) rows.push(`Ann${i},ann${i}@example.org`);
    rows.push("Chloé,chloe@example.org");
    const body = iconv.encode(`${rows.join("\n")}\n`, "windows-1252");
    const { report, people } = await dryRun(
      s,
      await s.file("late-lying-bom.csv", Buffer.concat([bom, body])),
      define({ columns: emailAndName }),
    );
    expect([report.encoding, report.rejected]).toEqual(["windows-1252", 0]);
    expect(people.at(-1)?.firstName).toBe("Chloé");
    expect(report.warnings.join("\n")).toContain("UTF-8 byte-order mark");
  });

  it("is dropped when the encoding is named, so the first header is clean", async () => {
    const body = iconv.encode("First Name,E-mail Address\nZoë,zoe@example.org\n", "windows-1252");
    const file = await s.file("named.csv", Buffer.concat([bom, body]));
    const columns = [
      { column: "First Name", to: "firstName" },
      { column: "E-mail Address", to: "email" },
    ];
    const { report, people } = await dryRun(
      s,
      file,
      define({ columns, source: { encoding: "windows-1252" } }),
    );
    expect(report.unmappedColumns).toEqual([]);
    expect(people).toEqual([{ firstName: "Zoë", email: "zoe@example.org" }]);
    // And a UTF-8 file with its mark named as latin1 reads "First Name", not "ï»¿First Name".
    const utf8 = await s.file("named-utf8.csv", `\ufeffFirst Name,E-mail Address\nAda,ada@example.org\n`);
    const latin = await dryRun(s, utf8, define({ columns, source: { encoding: "latin1" } }));
    expect(latin.people).toEqual([{ firstName: "Ada", email: "ada@example.org" }]);
  });
});

describe("repeated header names", () => {
  const hubspot = [
    "Record ID,First Name,Last Name,Email,Phone Number,Associated Company,Company name,Phone Number",
    "1,Ada,Lovelace,ada@example.org,+44 20 7946 0958,Analytical Engines,Analytical Engines,+44 20 7946 0000",
    "",
  ].join("\n");

  it("are addressed by occurrence or by position", async () => {
    const file = await s.file("hubspot-company.csv", hubspot);
    const byOccurrence = await dryRun(
      s,
      file,
      define({
        columns: [
          { column: "Email", to: "email" },
          { column: "Phone Number", occurrence: 1, to: "phone", transforms: ["phone"] },
          { column: "Phone Number", occurrence: 2, to: { name: "Company phone", propertyType: "STRING" } },
        ],
      }),
    );
    expect(byOccurrence.people[0]).toMatchObject({
      phone: "+442079460958",
      properties: [{ name: "Company phone", value: "+44 20 7946 0000" }],
    });
    const byPosition = await dryRun(
      s,
      file,
      define({
        columns: [
          { column: "Email", to: "email" },
          { position: 5, to: "phone", transforms: ["phone"] },
          { column: "Phone Number", position: 8, to: "additionalPhones", transforms: ["phone"] },
        ],
      }),
    );
    expect(byPosition.people[0]).toMatchObject({
      phone: "+442079460958",
      additionalPhones: ["+442079460000"],
    });
  });

  it("refuses a mapping that names a repeated header alone, in one line saying where it is and how to choose", async () => {
    const file = await s.file("hubspot-company.csv", hubspot);
    const err = await dryRun(
      s,
      file,
      define({
        columns: [
          { column: "Email", to: "email" },
          { column: "Phone Number", to: "phone" },
        ],
      }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportFileError);
    expect((err as ImportFileError).code).toBe("file_duplicate_header");
    expect((err as ImportFileError).message).toBe(
      'the header "Phone Number" (columns.1) appears in columns 5, 8: say which with occurrence: 1 to 2 (the first is 1), or position: 5 or 8',
    );
    const label = await dryRun(
      s,
      file,
      define({ columns: [{ column: "Email", position: 5, to: "email" }] }),
    ).catch((e: unknown) => e);
    expect((label as Error).message).toContain('the file\'s column 5 is headed "Phone Number"');
  });

  it("under a preset, give the person's column (the first) and list the company's as unmapped", async () => {
    const file = await s.file("hubspot-company.csv", hubspot);
    const { report, people } = await dryRun(s, file, define({ preset: "hubspot" }));
    expect(people[0]).toMatchObject({ email: "ada@example.org", phone: "+442079460958" });
    expect(report.unmappedColumns).toContain("Phone Number (column 8)");
  });

  it("checks the new keys where the definition is validated", () => {
    const bad = validateImportJobDefinition({
      kind: "import",
      target: { studyId: "s" },
      columns: [{ to: "email" }, { column: "Phone", occurrence: 2, position: 3, to: "phone" }],
    });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.problems.map((p) => p.path)).toEqual(["columns.0.column", "columns.1.occurrence"]);
  });
});

describe("cells of several emails or phones", () => {
  const columns = [
    { column: "E-mail 1 - Value", to: "email", transforms: ["lowercase"] },
    { column: "Phone 1 - Value", to: "phone", transforms: ["phone"] },
    { column: "Other Phones", to: "additionalPhones", transforms: ["phone"] },
  ];

  for (const worker of [false, true]) {
    it(`split on " ::: ", ";" and ",": the first to the field, the rest to the list, without repeats${worker ? " (worker thread)" : ""}`, async () => {
      const file = await s.file(
        `multi-${worker}.csv`,
        [
          "E-mail 1 - Value,Phone 1 - Value,Other Phones",
          "Ada@Example.org ::: ada@work.example.org,+91 98765 43210 ::: +91 98765 43211,+91 98765 43211; +91 98765 43212",
          '"bo@example.org, bo@home.example.org;bo@example.org",+49 30 1234567,',
          'cy@example.org,"+49 30 1234567,5",',
          "",
        ].join("\n"),
      );
      const { report, people } = await dryRun(s, file, define({ columns, phoneCountry: "DE" }), worker);
      expect(people[0]).toEqual({
        email: "ada@example.org",
        additionalEmails: ["ada@work.example.org"],
        phone: "+919876543210",
        additionalPhones: ["+919876543211", "+919876543212"],
      });
      expect(people[1]).toEqual({
        email: "bo@example.org",
        additionalEmails: ["bo@home.example.org"],
        phone: "+49301234567",
      });
      // A comma before a few digits is a pause or an extension, not a second number: one value.
      expect(people[2]).toEqual({ email: "cy@example.org", phone: "+49301234567" });
      expect(report.droppedValues).toBe(0);
    });
  }

  it("leave a failing extra value out without costing the identifier", async () => {
    const file = await s.file("multi-bad.csv", "E-mail 1 - Value\nada@example.org ::: not-an-email\n");
    const { report, people } = await dryRun(
      s,
      file,
      define({ columns: [{ column: "E-mail 1 - Value", to: "email" }] }),
    );
    expect(people).toEqual([{ email: "ada@example.org" }]);
    expect(report.rejected).toBe(0);
    expect(report.droppedByField).toEqual({ additionalEmails: { "Invalid email address": 1 } });
  });

  it("read the placeholders of an empty cell (null, n/a, -) as empty, in email and phone columns only", async () => {
    const file = await s.file(
      "placeholders.csv",
      "Email,Phone,Last Name\na@example.org,null,Null\nn/a,-,None\nb@example.org,N/A,x\n",
    );
    const def = define({
      phoneCountry: "US",
      columns: [
        { column: "Email", to: "email" },
        { column: "Phone", to: "phone", transforms: ["phone"] },
        { column: "Last Name", to: "lastName" },
      ],
    });
    const { report, people, rejects } = await dryRun(s, file, def);
    expect(people).toEqual([
      { email: "a@example.org", lastName: "Null" },
      { email: "b@example.org", lastName: "x" },
    ]);
    expect(report).toMatchObject({ droppedValues: 0, rejected: 1 });
    expect(rejects.slice(1).map((r) => r[1])).toEqual(["Email: empty, and it is the identifier (email)"]);
  });

  it("take the first valid number for the identifier, an invalid one before it left out", async () => {
    // Google Contacts: "91438432 ::: +91 98765 43210" was rejected for its first, short number.
    const file = await s.file(
      "multi-first-bad.csv",
      "Phone 1 - Value\n91438432 ::: +91 98765 43210 ::: 98765 43211\n121 ::: *123#\n",
    );
    const def = define({
      target: { studyId: "study_1", identifier: "phone" },
      phoneCountry: "IN",
      columns: [{ column: "Phone 1 - Value", to: "phone", transforms: ["phone"] }],
    });
    const { report, people, rejects } = await dryRun(s, file, def);
    expect(people).toEqual([{ phone: "+919876543210", additionalPhones: ["+919876543211"] }]);
    expect(report).toMatchObject({ imported: 1, rejected: 1, droppedValues: 1 });
    expect(rejects.slice(1).map((r) => r[1])).toEqual([
      "Phone 1 - Value: not a valid phone number (default country IN); Phone 1 - Value: not a valid phone number (default country IN); Phone 1 - Value: no valid value, and it is the identifier (phone)",
    ]);
  });
});

describe("a full-name column", () => {
  it("fills first and last name, 'Last, First' and titles included; a first or last name column wins", async () => {
    const file = await s.file(
      "names.csv",
      [
        "Email,Name,Vorname",
        'a@example.org,"Lovelace, Ada",',
        "b@example.org,Dr. Grace B. Hopper Jr.,",
        "c@example.org,Cher,",
        "d@example.org,Maria Keller,Mia",
        "",
      ].join("\n"),
    );
    const { people } = await dryRun(
      s,
      file,
      define({
        columns: [
          { column: "Email", to: "email" },
          { column: "Name", to: "fullName" },
          { column: "Vorname", to: "firstName" },
        ],
      }),
    );
    expect(people).toEqual([
      { email: "a@example.org", firstName: "Ada", lastName: "Lovelace" },
      { email: "b@example.org", firstName: "Grace B.", lastName: "Hopper Jr." },
      { email: "c@example.org", firstName: "Cher" },
      { email: "d@example.org", firstName: "Mia", lastName: "Keller" },
    ]);
  });
});

describe("a per-row phone country", () => {
  it("reads each row's national numbers in its own country, else the job's default", async () => {
    const file = await s.file(
      "countries.csv",
      [
        "Email,Phone,Country Code",
        "a@example.org,030 1234567,DE",
        "b@example.org,912 345 678,Spain",
        "c@example.org,020 7946 0958,+44",
        "d@example.org,(415) 555-0132,",
        "e@example.org,06 12 34 56 78,Frankreich",
        "",
      ].join("\n"),
    );
    const { report, people } = await dryRun(
      s,
      file,
      define({
        columns: [
          { column: "Email", to: "email" },
          { column: "Phone", to: "phone", transforms: ["phone"] },
        ],
        phoneCountry: "US",
        phoneCountryColumn: "Country Code",
      }),
    );
    expect(people.map((p) => p.phone)).toEqual([
      "+49301234567",
      "+34912345678",
      "+442079460958",
      "+14155550132",
      "+33612345678",
    ]);
    expect(report.unmappedColumns).toEqual([]);
  });

  it("costs a failing phone the value, not the person, listed in the warnings file with row and column", async () => {
    const file = await s.file("no-country.csv", "Email,Phone\na@example.org,030 1234567\n");
    const { report, people } = await dryRun(
      s,
      file,
      define({
        columns: [
          { column: "Email", to: "email" },
          { column: "Phone", to: "phone", transforms: ["phone"] },
        ],
      }),
    );
    expect(people).toEqual([{ email: "a@example.org" }]);
    const warnings = await readFile(report.warningsFile as string, "utf8");
    expect(warnings).toContain("2,phone,Phone,phone_needs_country,");
    expect(warnings).not.toContain("030 1234567");
  });
});

describe("consent columns", () => {
  const file = () =>
    s.file(
      "mailchimp.csv",
      [
        "Email Address,Status,Newsletter,Opted Out",
        "a@example.org,subscribed,ja,no",
        "b@example.org,unsubscribed,nein,yes",
        "c@example.org,cleaned,,",
        "d@example.org,pending,,",
        "",
      ].join("\n"),
    );

  it("never read 'subscribed' as opted out; 'unsubscribed' opts out; 'cleaned' and 'pending' are left unset and reported", async () => {
    const { report, people } = await dryRun(
      s,
      await file(),
      define({
        columns: [
          { column: "Email Address", to: "email" },
          { column: "Status", to: "isOptedOut", transforms: ["boolean"] },
        ],
      }),
    );
    // a (subscribed) is "not opted out", held back: an import opts nobody back in.
    expect(people).toEqual([
      { email: "a@example.org" },
      { email: "b@example.org", isOptedOut: true },
      { email: "c@example.org" },
      { email: "d@example.org" },
    ]);
    expect(report).toMatchObject({ optedOut: 1, optInsHeldBack: 1, rejected: 0 });
    const warnings = await readFile(report.warningsFile as string, "utf8");
    expect(warnings).toContain(
      '4,isOptedOut,Status,consent_unstated,"""cleaned"" says nothing about consent',
    );
    expect(warnings).toContain(
      '5,isOptedOut,Status,consent_unstated,"""pending"" says nothing about consent',
    );
    const summary = formatSummary(report);
    expect(summary).toContain("1 rows would opt their person out");
    expect(summary).toContain('1 rows said "not opted out" and would be held back');
  });

  it("read yes/no by the header: ja in a Newsletter column is consent, yes in an Opted Out column opts out", async () => {
    for (const column of ["Newsletter", "Opted Out"]) {
      const { people } = await dryRun(
        s,
        await file(),
        define({
          columns: [
            { column: "Email Address", to: "email" },
            { column, to: "isOptedOut" },
          ],
        }),
      );
      expect(people.slice(0, 2)).toEqual([
        { email: "a@example.org" },
        { email: "b@example.org", isOptedOut: true },
      ]);
    }
  });

  it("refuse a definition whose boolean words read 'subscribed' as opted out", () => {
    const bad = validateImportJobDefinition({
      kind: "import",
      target: { studyId: "s" },
      columns: [
        { column: "Email", to: "email" },
        {
          column: "Status",
          to: "isOptedOut",
          transforms: [{ boolean: { true: ["subscribed"], false: ["unsubscribed"] } }],
        },
      ],
    });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.problems[0]?.message).toContain('reads "subscribed" as opted out');
  });
});

describe("the dry run", () => {
  it("says when the real run would be refused, by the real run's rule", async () => {
    const lines = ["Email,Name"];
    for (let i = 0; i < 150; i++) lines.push(i < 100 ? `not-an-email-${i},P${i}` : `p${i}@example.org,P${i}`);
    const file = await s.file("mostly-wrong.csv", `${lines.join("\n")}\n`);
    const { report } = await dryRun(s, file, define({ columns: [{ column: "Email", to: "email" }] }));
    expect(report.wouldBeRefused).toMatch(
      /^a real run would be refused \(import_mostly_rejected\): 100 of the first 150 rows were rejected \(100× Email: Invalid email address\): nothing would be sent\./,
    );
    expect(formatSummary(report).split("\n")[0]).toContain("a real run would be refused");
  });
});

describe("the rejects file", () => {
  it("has the source's delimiter, and a byte-order mark when the source had one", async () => {
    const file = await s.file("semicolon.csv", "\ufeffEmail;Name\nnot-an-email;Ann\nb@example.org;Bo\n");
    const { report } = await dryRun(s, file, define({ columns: [{ column: "Email", to: "email" }] }));
    const bytes = await readFile(report.rejectsFile as string);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString("utf8")).toBe(
      "_source_row;_reject_reason;_reject_code;Email;Name\n2;Email: Invalid email address;invalid_format;not-an-email;Ann\n",
    );
  });
});

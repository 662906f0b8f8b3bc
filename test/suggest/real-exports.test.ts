import path from "node:path";
import { describe, expect, it } from "vitest";
import { ImportJobDefinition, type Transform } from "../../src/config/import-job.ts";
import { compileTransforms, createRowMapper, isFailure, planColumns } from "../../src/imports/index.ts";
import { countryOfValue } from "../../src/suggest/country-values.ts";
import {
  type MappingSuggestion,
  suggestionYaml,
  suggestMapping,
  suggestMappingForFile,
} from "../../src/suggest/index.ts";
import { readSample } from "../../src/suggest/read-sample.ts";
import { READER } from "./reader-support.ts";

const FIXTURES = path.join(import.meta.dirname, "fixtures");
const fixture = (file: string) => suggestMappingForFile(path.join(FIXTURES, file), { name: "x" });
const column = (s: MappingSuggestion, name: string, occurrence?: number) =>
  s.columns.find((c) => c.column === name && c.occurrence === occurrence);

/** What the import's own transforms make of a consent cell under the suggested column's transforms. */
function optedOutOf(transforms: readonly Transform[], cell: string): boolean | "reported" {
  const r = compileTransforms(transforms)(cell);
  return typeof r === "boolean" ? r : isFailure(r) ? "reported" : (r as never);
}

describe("a trailing delimiter (Outlook CSV from Google)", () => {
  it("invents no column for the empty cell every row ends with", async () => {
    const s = await fixture("outlook-trailing-delimiter.csv");
    expect(s.columns.map((c) => c.column)).toEqual([
      "First Name",
      "Middle Name",
      "Last Name",
      "Title",
      "Suffix",
      "E-mail Address",
      "E-mail 2 Address",
      "Business Phone",
      "Home Phone",
      "Mobile Phone",
      "Company",
      "Job Title",
      "Notes",
      "Categories",
    ]);
    expect(ImportJobDefinition.safeParse(s.definition).success).toBe(true);
  });

  it("invents none for a trailing empty header cell over empty values either", () => {
    const s = suggestMapping(
      [
        ["Email", "Name", ""],
        ["a@example.org", "Ann", ""],
      ],
      { name: "x" },
    );
    expect(s.columns.map((c) => c.column)).toEqual(["Email", "Name"]);
  });

  it.runIf(READER.trailingDelimiter)(
    "imports every sampled row (needs the reader's trailing delimiter)",
    async () => {
      const s = await fixture("outlook-trailing-delimiter.csv");
      expect(s.outcome).toMatchObject({ rows: 5, imported: 5, rejected: 0 });
    },
  );
});

describe("repeated header names (HubSpot contacts with their company's columns)", () => {
  it("maps the contact's Phone Number by occurrence and leaves the company's, and names no preset", async () => {
    const s = await fixture("hubspot-with-company.csv");
    expect(column(s, "Phone Number", 1)).toMatchObject({ to: "phone", occurrence: 1 });
    expect(column(s, "Phone Number", 2)).toMatchObject({ to: null, occurrence: 2 });
    expect(column(s, "Phone Number", 2)?.note).toMatch(/organisation's columns: the person's is column 5/);
    expect(s.preset).toBeNull();
    expect(
      s.columns.filter((c) => c.why === "preset").every((c) => /preset itself is left out/.test(c.note)),
    ).toBe(true);
  });

  // Each file: the organisation's column first, then its phone, then the person's columns and phone.
  it.each([
    {
      why: "English headers (Company Name)",
      headers: ["Company Name", "Phone Number", "First Name", "Email", "Phone Number"],
      row: ["Acme", "(212) 555-0100", "Ann", "ann@example.org", "(212) 555-0101"],
    },
    {
      why: "a German employer's column (Arbeitgeber)",
      headers: ["Arbeitgeber", "Telefon", "Vorname", "E-Mail", "Telefon"],
      row: ["Acme GmbH", "030 1234567", "Anna", "anna@example.org", "+49 30 7654321"],
    },
  ])("takes the person's column when it comes second, after the company's: $why", ({ headers, row }) => {
    const s = suggestMapping([headers, row], { name: "x" });
    const [org, phone, first, email] = headers;
    expect(s.columns.map((c) => [c.column, c.occurrence, c.to])).toEqual([
      [org, undefined, null],
      [phone, 1, null],
      [first, undefined, "firstName"],
      [email, undefined, "email"],
      [phone, 2, "phone"],
    ]);
  });

  it.runIf(READER.occurrence)(
    "writes occurrence into the job, which imports every row (needs columns[].occurrence)",
    async () => {
      const s = await fixture("hubspot-with-company.csv");
      expect(s.problems).toEqual([]);
      expect(s.definition?.preset).toBeUndefined();
      expect(s.definition?.columns).toContainEqual(
        expect.objectContaining({ column: "Phone Number", occurrence: 1, to: "phone" }),
      );
      expect(s.definition?.columns?.filter((c) => c.column === "Phone Number")).toHaveLength(1);
      expect(s.outcome).toMatchObject({ rows: 6, imported: 6, rejected: 0, stopped: null });
    },
  );
});

describe("the phones' default country, inferred and shown", () => {
  it("reads a German list's national numbers as DE, from its .de emails and German headers", async () => {
    const s = await fixture("german-mobiles.csv");
    expect(s.phoneCountry).toMatchObject({ country: "DE", column: null, from: "email domains" });
    expect(s.phoneCountry?.reason).toMatch(/17 of 17 sampled emails are at \.de domains/);
    expect(s.phoneCountry?.reason).toMatch(/recognised headers are German/);
  });

  it("lets the file's own +numbers outweigh its emails' domains and its headers' language", () => {
    const s = suggestMapping(
      [
        ["Vorname", "E-Mail", "Telefon"],
        ["Ann", "ann@beispiel.de", "+44 20 7946 0555"],
        ["Bob", "bob@beispiel.de", "+44 20 7946 0556"],
        ["Cem", "cem@beispiel.de", "020 7946 0557"],
      ],
      { name: "x" },
    );
    expect(s.phoneCountry).toMatchObject({ country: "GB", from: "numbers" });
    expect(s.phoneCountry?.reason).toMatch(
      /^GB .*2 of the 2 sampled numbers written with \+ are United Kingdom/,
    );
    expect(s.definition).toMatchObject({ phoneCountry: "GB" });
  });

  it("reads +34 numbers in a Spanish export as ES", async () => {
    expect((await fixture("spanish-export.csv")).phoneCountry).toMatchObject({
      country: "ES",
      from: "numbers",
    });
  });

  it("suggests Shopify's Country Code as the per-row country, and the most named country as the default", async () => {
    const s = await fixture("shopify-customers.csv");
    expect(s.phoneCountry).toMatchObject({ country: "DE", column: "Country Code", from: "country column" });
    expect(s.phoneCountry?.reason).toMatch(/"Country Code" gives each row its own country/);
  });

  it("does not take a country column naming many countries for the default: US-written numbers in a Salesforce report", async () => {
    const s = await fixture("salesforce-contacts.csv");
    expect(s.phoneCountry).toMatchObject({ country: "US", from: "headers" });
  });

  it("takes --phone-country over anything inferred, and says so", () => {
    const s = suggestMapping(
      [
        ["Email", "Phone"],
        ["ann@beispiel.de", "0660 5550100"],
      ],
      { name: "x", phoneCountry: "AT" },
    );
    expect(s.phoneCountry).toMatchObject({ country: "AT", from: "option" });
    expect(s.definition).toMatchObject({ phoneCountry: "AT" });
  });

  it("sets no country when nothing in the file names one", () => {
    const s = suggestMapping(
      [
        ["Who", "Contact"],
        ["Ann", "0660 5550100"],
        ["Bob", "0660 5550101"],
      ],
      { name: "x" },
    );
    expect(s.phoneCountry).toMatchObject({ country: null, from: "none" });
    expect(s.definition).not.toHaveProperty("phoneCountry");
  });
});

describe("the identifier chosen by the rows it imports", () => {
  it("takes phone for a German list with 17 emails and 68 mobiles in 73 rows, combining mobile, office and home", async () => {
    const s = await fixture("german-mobiles.csv");
    expect(s.identifier).toMatchObject({ identifier: "phone", rows: 73, counts: { email: 17, phone: 72 } });
    expect(s.identifier?.reason).toMatch(
      /^phone: the 73 sampled rows hold 72 people by a valid phone number \("Mobil", then "Telefon geschäftlich", then "Telefon privat"/,
    );
    // Every phone column feeds the phone, the mobile first: the first with a value is the phone.
    expect(s.columns.filter((c) => c.to === "phone").map((c) => c.column)).toEqual([
      "Mobil",
      "Telefon geschäftlich",
      "Telefon privat",
    ]);
    expect(column(s, "E-Mail")?.to).toBe("email");
  });

  it("keeps email when as many rows have one, and phone columns as phone and additional phones", async () => {
    const s = await fixture("german-export.csv");
    expect(s.identifier).toMatchObject({ identifier: "email", counts: { email: 3, phone: 3 } });
    expect(s.definition?.target.identifier).toBe("email");
    expect(s.columns.filter((c) => c.to === "phone")).toHaveLength(1);
  });

  it("counts only valid values: a column of broken addresses loses to the phones", () => {
    const s = suggestMapping(
      [
        ["Email", "Mobile"],
        ["ann(at)example.org", "+49 151 5550100"],
        ["bob at example", "+49 151 5550101"],
        ["cem@example.org", "+49 151 5550102"],
      ],
      { name: "x" },
    );
    expect(s.identifier).toMatchObject({ identifier: "phone", counts: { email: 1, phone: 3 } });
    expect(s.definition?.target.identifier).toBe("phone");
  });

  it.runIf(READER.phoneFromSeveralColumns)(
    "writes the combined phones into a job that imports every row with a phone (needs several columns to phone)",
    async () => {
      const s = await fixture("german-mobiles.csv");
      expect(s.problems).toEqual([]);
      expect(s.definition?.columns?.filter((c) => c.to === "phone").map((c) => c.column)).toEqual([
        "Mobil",
        "Telefon geschäftlich",
        "Telefon privat",
      ]);
      expect(s.outcome).toMatchObject({ rows: 73, imported: 72, rejected: 1 });
    },
  );
});

describe("full-name columns", () => {
  it.each([
    [["Name", "Email"], "Name"],
    [["Full Name", "Email"], "Full Name"],
    [["Vor- und Nachname", "E-Mail"], "Vor- und Nachname"],
    [["Nombre completo", "Correo"], "Nombre completo"],
    [["nombre", "correo"], "nombre"],
  ])("maps %j to fullName when no first or last name column exists", (headers, name) => {
    const s = suggestMapping([headers, ["Ann Example", "ann@example.org"]], { name: "x" });
    expect(column(s, name)).toMatchObject({ to: "fullName", why: "header" });
  });

  it("leaves a Name column beside first and last names alone", async () => {
    expect(column(await fixture("google-contacts.csv"), "Name")?.to).toBeNull();
  });

  it.runIf(READER.fullName)("writes to: fullName into a job the schema accepts (needs to: fullName)", () => {
    const s = suggestMapping(
      [
        ["Name", "Email"],
        ["Example, Ann", "ann@example.org"],
      ],
      { name: "x" },
    );
    expect(s.problems).toEqual([]);
    expect(s.definition?.columns).toContainEqual({ column: "Name", to: "fullName" });
  });
});

describe("consent columns, with the right polarity", () => {
  it("maps Mailchimp's status: unsubscribed opts out, subscribed never, cleaned and pending are reported", async () => {
    const s = await fixture("mailchimp-status.csv");
    const c = column(s, "status");
    expect(c).toMatchObject({ to: "isOptedOut", why: "values" });
    const t = c?.transforms ?? [];
    expect(optedOutOf(t, "unsubscribed")).toBe(true);
    expect(optedOutOf(t, "subscribed")).toBe(false);
    expect(optedOutOf(t, "Subscribed")).toBe(false);
    expect(optedOutOf(t, "cleaned")).toBe("reported");
    expect(optedOutOf(t, "pending")).toBe("reported");
    expect(c?.note).toMatch(/cleaned, pending: they say nothing about consent\): such rows are reported/);
  });

  it("runs Mailchimp's status through the import's row mapping: no subscribed person opted out, every unsubscribed one", async () => {
    const file = path.join(FIXTURES, "mailchimp-status.csv");
    const s = await suggestMappingForFile(file, { name: "x" });
    const def = ImportJobDefinition.parse(s.definition);
    const [headers, ...rows] = await readSample(file);
    const map = createRowMapper(planColumns(headers as string[], def), def);
    const statusAt = (headers as string[]).indexOf("status");
    let checked = 0;
    rows.forEach((cells, i) => {
      const m = map(cells, i + 2);
      const status = cells[statusAt];
      if (status === "unsubscribed") expect(m.ok && m.person.isOptedOut).toBe(true);
      else if (m.ok) expect(m.person.isOptedOut).not.toBe(true);
      checked++;
    });
    expect(checked).toBe(8);
  });

  it.each([
    ["Email Opt Out", "1", true, "0", false, "Salesforce: true means opted out"],
    ["Email Opt Out", "true", true, "false", false, "Salesforce, as words"],
    ["Accepts Email Marketing", "yes", false, "no", true, "Shopify: yes is consent"],
    ["Accepts Marketing", "yes", false, "no", true, "Shopify's older export"],
    ["Newsletter", "ja", false, "nein", true, "German newsletter"],
    ["Einwilligung", "ja", false, "nein", true, "German consent"],
    ["Abmeldung", "ja", true, "nein", false, "German unsubscription"],
    ["Baja", "sí", true, "no", false, "Spanish unsubscription"],
    ["consentimiento", "sí", false, "no", true, "Spanish consent"],
    ["Newsletter", "subscribed", false, "unsubscribed", true, "statuses under a consent header"],
    ["Email Opt Out", "subscribed", false, "unsubscribed", true, "statuses under an opt-out header"],
  ])("reads %s: %s → %s, %s → %s (%s)", (header, a, aOut, b, bOut) => {
    const s = suggestMapping(
      [
        ["Email", header],
        ["ann@example.org", a],
        ["bob@example.org", b],
      ],
      { name: "x" },
    );
    const c = column(s, header);
    expect(c?.to).toBe("isOptedOut");
    expect(optedOutOf(c?.transforms ?? [], a)).toBe(aOut);
    expect(optedOutOf(c?.transforms ?? [], b)).toBe(bOut);
    expect(s.problems).toEqual([]);
  });

  it("reads Wix's Email subscriber status, leaving Never subscribed in neither list", () => {
    const s = suggestMapping(
      [
        ["Email", "Email subscriber status"],
        ["ann@example.org", "Subscribed"],
        ["bob@example.org", "Unsubscribed"],
        ["cem@example.org", "Never subscribed"],
      ],
      { name: "x" },
    );
    const t = column(s, "Email subscriber status")?.transforms ?? [];
    expect(optedOutOf(t, "Subscribed")).toBe(false);
    expect(optedOutOf(t, "Unsubscribed")).toBe(true);
    expect(optedOutOf(t, "Never subscribed")).toBe("reported");
  });

  it("leaves HubSpot's Marketing contact status unmapped: marketing or not says nothing about consent", () => {
    const s = suggestMapping(
      [
        ["Email", "Marketing contact status"],
        ["ann@example.org", "Marketing contact"],
        ["bob@example.org", "Non-marketing contact"],
      ],
      { name: "x" },
    );
    const c = column(s, "Marketing contact status");
    expect(c?.to).toBeNull();
    expect(c?.note).toMatch(/none of its 2 sampled values says whether the person consents/);
  });

  it("leaves a lead status alone, whatever its header", () => {
    const s = suggestMapping(
      [
        ["Email", "Status"],
        ["ann@example.org", "New"],
        ["bob@example.org", "Open"],
      ],
      { name: "x" },
    );
    expect(column(s, "Status")?.to).toBeNull();
  });
});

describe("what the suggestion says will happen", () => {
  it("runs the sampled rows through the import's row mapping and counts imports, rejects, opt-outs and reasons", async () => {
    const s = await fixture("mailchimp-status.csv");
    expect(s.outcome).toMatchObject({ rows: 8, optedOut: 2, heldBack: 4, wouldRefuse: false, stopped: null });
    expect((s.outcome?.imported ?? 0) + (s.outcome?.rejected ?? 0)).toBe(8);
    const yaml = suggestionYaml(s, s.definition as NonNullable<typeof s.definition>);
    expect(yaml).toMatch(
      /^# On the 8 sampled rows: \d would import, \d would be rejected; 2 opted out, 4 "not opted out" held back(; \d+ invalid values? left out)?\.$/m,
    );
    expect(yaml).toMatch(
      /^# Identifier email: the 8 sampled rows hold 8 people by a valid email \("Email Address"\); rows sharing a value are one person\.$/m,
    );
  });

  it("names the top reasons by header, never quoting a cell", () => {
    const s = suggestMapping(
      [
        ["Email", "First Name"],
        ["ann@example.org", "Ann"],
        ["not-an-address", "Bob"],
        ["", "Cem"],
      ],
      { name: "x" },
    );
    expect(s.outcome).toMatchObject({ rows: 3, imported: 1, rejected: 2 });
    expect(s.outcome?.topReasons.map((r) => r.rows)).toEqual([1, 1]);
    for (const r of s.outcome?.topReasons ?? []) expect(r.reason).toMatch(/^Email: /);
    expect(JSON.stringify(s.outcome)).not.toMatch(/not-an-address|Bob|Cem/);
  });

  it("says when a run would refuse the file as mostly rejected", () => {
    const rows = Array.from({ length: 120 }, (_v, i) => [i < 100 ? `broken${i}` : `p${i}@example.org`]);
    const s = suggestMapping([["Email"], ...rows], { name: "x" });
    expect(s.outcome).toMatchObject({ rows: 120, rejected: 100, wouldRefuse: true });
    expect(suggestionYaml(s, s.definition as NonNullable<typeof s.definition>)).toMatch(
      /^# A run would refuse this file: more than half of its first rows are rejected\.$/m,
    );
  });

  it("gives each column a reason in words", async () => {
    for (const file of ["german-mobiles.csv", "mailchimp-status.csv", "hubspot-with-company.csv"]) {
      for (const c of (await fixture(file)).columns) expect(c.note, `${file}: ${c.column}`).not.toBe("");
    }
  });
});

describe("the legacy CRM and Salesforce person-account cases (issue 30 corpus)", () => {
  it("counts people, not rows: a switchboard number on every row is one person, and email wins", () => {
    const rows = Array.from({ length: 6 }, (_v, i) => [i < 4 ? `p${i}@example.org` : "", "(415) 555-0100"]);
    const s = suggestMapping([["Email", "Phone"], ...rows], { name: "x", phoneCountry: "US" });
    expect(s.identifier).toMatchObject({
      identifier: "email",
      counts: { email: 4, phone: 1 },
      rowCounts: { email: 4, phone: 6 },
    });
    expect(s.identifier?.reason).toMatch(
      /1 person \(6 rows, some sharing one value\) by a valid phone number/,
    );
    expect(s.identifier?.reason).toMatch(/rows sharing a value are one person$/);
  });

  it("reads a country name cut off by an old export when only one country's name starts so", () => {
    expect(countryOfValue("United States of Ame")).toBe("US");
    expect(countryOfValue("Vereinigte Staat")).toBe("US");
    expect(countryOfValue("United")).toBeUndefined(); // too short to tell
    expect(countryOfValue("United Arab Emirates and more")).toBeUndefined();
    expect(countryOfValue("Vereinigte")).toBeUndefined(); // Staaten, Arabische Emirate, Königreich
  });

  it("lets a country column of cut-off names outweigh two +numbers among many national ones", () => {
    const rows = Array.from({ length: 40 }, (_v, i) => [
      `p${i}@example.org`,
      i < 2 ? `+52 55 1234 56${10 + i}` : `(415) 555-01${String(10 + i).padStart(2, "0")}`,
      i < 25 ? "United States of Ame" : i < 32 ? "India" : "Canada",
    ]);
    const s = suggestMapping([["Email", "Phone", "Country"], ...rows], { name: "x" });
    expect(s.phoneCountry).toMatchObject({ country: "US", from: "country column" });
    expect(s.phoneCountry?.reason).toMatch(/"Country" names US in 25 of 40 sampled rows/);
    // Two +52 numbers of 40 count a fifth: MX 0.8, not the 4.0 that would beat the column.
    expect(s.phoneCountry?.reason).toMatch(/^US \(score 2\.4; then MX 0\.8\)/);
  });

  it.each([
    ["Email Opt-In", "1", false, "0", true],
    ["Exclude_from_Email_SMS", "Yes", true, "No", false],
    ["Newsletter opt out", "x", true, "", undefined],
  ])("maps %s to isOptedOut by the consent phrase in it (%s → %s, %s → %s)", (header, a, aOut, b, bOut) => {
    const s = suggestMapping(
      [
        ["Email", header],
        ["ann@example.org", a],
        ["bob@example.org", b],
      ],
      { name: "x" },
    );
    const c = column(s, header);
    expect(c).toMatchObject({ to: "isOptedOut", why: "header" });
    expect(optedOutOf(c?.transforms ?? [], a)).toBe(aOut);
    if (bOut !== undefined) expect(optedOutOf(c?.transforms ?? [], b)).toBe(bOut);
  });

  it("leaves Mailchimp's OPTIN_TIME and a Spanish fecha_optin alone: when, not whether", () => {
    const s = suggestMapping(
      [
        ["Email", "OPTIN_TIME", "fecha_optin"],
        ["ann@example.org", "2024-01-02 10:00:00", "2024-01-02"],
      ],
      { name: "x" },
    );
    expect(column(s, "OPTIN_TIME")?.to).toBeNull();
    expect(column(s, "fecha_optin")?.to).toBeNull();
  });

  it("takes Account_Email for the email when no other column holds one, saying why and less sure", () => {
    const s = suggestMapping(
      [
        ["Account_Key", "First_Name", "Customer_Phone1", "Account_Email"],
        ["1-#1", "ANN", "7652933", "ann@example.org"],
        ["1-#2", "BOB", "9340575", ""],
        ["1-#3", "CEM", "9340576", "cem@example.org; cem@work.example.org"],
      ],
      { name: "x" },
    );
    expect(column(s, "Account_Email")).toMatchObject({ to: "email", why: "values", confidence: 0.6 });
    expect(column(s, "Account_Email")?.note).toMatch(
      /no other column holds an email.*Salesforce person account/,
    );
    expect(s.definition?.target.identifier).toBe("email");
    expect(s.identifier?.counts).toEqual({ email: 2 });
  });

  it("leaves Account_Email to the account when the person has an Email column", () => {
    const s = suggestMapping(
      [
        ["Email", "Account_Email"],
        ["ann@example.org", "office@example.org"],
      ],
      { name: "x" },
    );
    expect(column(s, "Email")?.to).toBe("email");
    expect(column(s, "Account_Email")?.to).toBeNull();
  });
});

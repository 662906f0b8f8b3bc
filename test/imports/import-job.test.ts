import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  DEFAULT_BATCH_SIZE,
  ImportJobDefinition,
  validateFileJobDefinition,
  validateImportJobDefinition,
} from "../../src/config/import-job.ts";

describe("import job definitions", () => {
  it("fills the documented defaults", () => {
    const def = ImportJobDefinition.parse({
      kind: "import",
      target: { studyId: "study_1" },
      columns: [{ column: "Email", to: "email" }],
    });
    expect(def.batchSize).toBe(DEFAULT_BATCH_SIZE);
    expect(def.target.identifier).toBe("email");
    expect(def.source).toEqual({
      encoding: "auto",
      delimiter: "auto",
      header: true,
      skipRows: 0,
      maxFieldLength: 65_536,
      maxRecordBytes: 64 * 1024 * 1024,
    });
    expect(def.columns[0]?.empty).toBe("omit");
  });

  it("reports every problem with its path", () => {
    const result = validateImportJobDefinition({
      kind: "import",
      source: { encoding: "ebcdic", delimiter: "|" },
      target: { studyId: "", identifier: "fax" },
      columns: [
        { column: "Email", to: "email", transforms: ["lowercasee"] },
        { column: "Phone", to: "phone", empty: "null" },
        { column: "When", to: "lastContactDate", transforms: [{ date: "DD/YYYY" }] },
        { column: "Tel", to: "phone", transforms: [{ phone: "XX" }] },
      ],
      batchSize: 5000,
      surprise: true,
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const byPath = Object.fromEntries(result.problems.map((p) => [p.path, p.message]));
    expect(Object.keys(byPath).sort()).toEqual(
      [
        "",
        "batchSize",
        "columns.0.transforms.0",
        "columns.2.transforms.0.date",
        "columns.3.transforms.0.phone",
        "source.delimiter",
        "source.encoding",
        "target.identifier",
        "target.studyId",
      ].sort(),
    );
    expect(byPath["columns.0.transforms.0"]).toMatch(/^unknown transform; one of trim, lowercase/);
    expect(byPath["columns.2.transforms.0.date"]).toMatch(/needs a month/);
    expect(byPath["columns.3.transforms.0.phone"]).toMatch(/country code/);
    expect(byPath[""]).toMatch(/surprise/);
  });

  it("allows null only where the service takes it, and says that null overwrites", () => {
    const result = validateImportJobDefinition({
      kind: "import",
      target: { studyId: "study_1" },
      columns: [
        { column: "Email", to: "email", empty: "null" },
        { column: "First", to: "firstName", empty: "null" },
        { column: "Notes", to: { name: "Notes", propertyType: "STRING" }, empty: "null" },
      ],
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      {
        path: "columns.0.empty",
        message: "null is only allowed for firstName, lastName and properties, not email",
      },
    ]);
  });

  it("needs a column for the identifier, unless a preset maps it by header", () => {
    const noEmail = validateImportJobDefinition({ kind: "import", target: { studyId: "s" }, columns: [] });
    expect(noEmail.ok ? [] : noEmail.problems.map((p) => p.path)).toEqual(["target.identifier"]);
    expect(
      validateImportJobDefinition({ kind: "import", preset: "hubspot", target: { studyId: "s" } }).ok,
    ).toBe(true);
    const prop = validateImportJobDefinition({
      kind: "import",
      preset: "hubspot",
      target: { studyId: "s", identifier: "property:property_1" },
    });
    expect(prop.ok ? "" : prop.problems[0]?.message).toMatch(/no column is mapped to property property_1/);
  });

  it("refuses a scalar field filled by two columns, but lets lists, email and phone take several", () => {
    const result = validateImportJobDefinition({
      kind: "import",
      target: { studyId: "s" },
      columns: [
        { column: "Email", to: "email" },
        { column: "Work email", to: "email" },
        { column: "Mobile", to: "phone" },
        { column: "Office", to: "phone" },
        { column: "Home", to: "phone" },
        { column: "Fax", to: "additionalPhones" },
        { column: "Pager", to: "additionalPhones" },
        { column: "First", to: "firstName" },
        { column: "Given name", to: "firstName" },
      ],
    });
    expect(result.ok ? [] : result.problems).toEqual([
      { path: "columns.8.to", message: "firstName is already filled by columns.7" },
    ]);
  });

  it("tells the kinds apart and refuses an unknown one", () => {
    expect(validateFileJobDefinition({ kind: "opt-out" }).ok).toBe(true);
    expect(validateFileJobDefinition({ kind: "export" })).toEqual({
      ok: false,
      problems: [{ path: "kind", message: 'must be "import" or "opt-out"' }],
    });
  });

  it("accepts every import and opt-out definition in jobs/", () => {
    for (const file of readdirSync("jobs").filter((f) => f.endsWith(".yaml"))) {
      const doc = parse(readFileSync(`jobs/${file}`, "utf8")) as { kind?: string };
      if (doc.kind !== "import" && doc.kind !== "opt-out") continue;
      const result = validateFileJobDefinition(doc);
      expect(result.ok ? [] : result.problems, file).toEqual([]);
    }
  });
});

import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { dryRun, type Scratch, scratch } from "./fixtures.ts";

/** The corpus of the npm package csv-spectrum: quoted commas, quotes, newlines, CRLF, UTF-8, U+FFFD. */
const CORPUS = path.join(
  path.dirname(createRequire(import.meta.url).resolve("csv-spectrum/package.json")),
  "csvs",
);
const FILES = readdirSync(CORPUS)
  .filter((f) => f.endsWith(".csv"))
  .sort();

let s: Scratch;
beforeAll(async () => {
  s = await scratch();
});
afterAll(async () => {
  await s.cleanup();
});

/**
 * Every cell goes to the service: the first column is the identifier (a
 * property), the others STRING properties named after their headers.
 */
function definitionFor(file: string): ImportJobDefinition {
  const [header] = parse(readFileSync(file), { to_line: 1 }) as string[][];
  return ImportJobDefinition.parse({
    kind: "import",
    target: { studyId: "study_1", identifier: "property:property_1" },
    columns: [{ column: (header as string[])[0], to: { propertyId: "property_1" } }],
    unmapped: "properties",
  });
}

/** What csv-parse reads (relaxed quotes, as the import), as the properties a person would carry (trimmed, empty cells left out). */
function expectedPeople(file: string): Record<string, string>[] {
  const records = parse(readFileSync(file), { columns: true, bom: true, relax_quotes: true }) as Record<
    string,
    string
  >[];
  return records.map((r) =>
    Object.fromEntries(
      Object.entries(r)
        .map(([k, v]) => [k, v.trim()] as const)
        .filter(([, v]) => v !== ""),
    ),
  );
}

function sentPeople(people: Record<string, unknown>[], idHeader: string): Record<string, string>[] {
  return people.map((p) => {
    const out: Record<string, string> = {};
    for (const prop of p.properties as { propertyId?: string; name?: string; value: string }[]) {
      out[prop.propertyId === "property_1" ? idHeader : (prop.name as string)] = prop.value;
    }
    return out;
  });
}

describe("the csv-spectrum corpus through the import pipeline", () => {
  it("imports every file without a crash, counts adding up, every value as csv-parse reads it", async () => {
    expect(FILES.length).toBeGreaterThanOrEqual(12);
    const outcomes: unknown[] = [];
    const expected: unknown[] = [];
    for (const name of FILES) {
      const file = path.join(CORPUS, name);
      const idHeader = Object.keys(expectedPeople(file)[0] ?? {})[0] as string;
      for (const worker of [false, true]) {
        const { report, people } = await dryRun(s, file, definitionFor(file), worker);
        outcomes.push({
          name,
          worker,
          addsUp: report.imported + report.rejected + report.duplicates === report.rowsRead,
          rejected: report.rejectedByReason,
          people: sentPeople(people, idHeader),
        });
        expected.push({ name, worker, addsUp: true, rejected: {}, people: expectedPeople(file) });
      }
    }
    expect(outcomes).toEqual(expected);
  });
});

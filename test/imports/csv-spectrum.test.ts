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

/**
 * Old Mac files end their records with a lone "\r" (Event Espresso's attendee
 * export, issue 30): read on every path that splits records — the UTF-8 fast
 * path, csv-parse after a record the fast path hands over, another encoding,
 * in the thread and on the parse thread, and across the reads of a file
 * larger than one.
 */
describe("old-Mac files, each record ended by a lone CR", () => {
  const definition = ImportJobDefinition.parse({
    kind: "import",
    target: { studyId: "study_1" },
    columns: [
      { column: "Email", to: "email" },
      { column: "First", to: "firstName" },
    ],
  });
  const filler = "y".repeat(300);
  const rows = Array.from({ length: 400 }, (_v, i) => `p${i}@example.org,Pé${i},${filler}`);
  const cases: { name: string; text: string; encoding?: string }[] = [
    { name: "plain", text: `Email,First,Note\r${rows.slice(0, 3).join("\r")}\r` },
    {
      // A quote the fast path cannot vouch for: csv-parse reads the rest, a quoted CR inside a cell included.
      name: "handed to csv-parse",
      text: `Email,First,Note\r${rows[0]}\rp1@example.org,Pé1,say "hi"\rp2@example.org,"Pé2","two\rlines"\r`,
    },
    {
      name: "windows-1252",
      text: `Email,First,Note\r${rows.slice(0, 3).join("\r")}`,
      encoding: "windows-1252",
    },
    { name: "larger than a read", text: `Email,First,Note\r${rows.join("\r")}\r` },
  ];
  for (const c of cases) {
    for (const worker of [false, true]) {
      it(`reads ${c.name}${worker ? " (parse thread)" : ""}`, async () => {
        const bytes = c.encoding === undefined ? Buffer.from(c.text) : Buffer.from(c.text, "latin1");
        const file = await s.file(`cr-${c.name.replace(/ /g, "-")}-${worker}.csv`, bytes);
        const { report, people } = await dryRun(s, file, definition, worker);
        const n = c.name === "larger than a read" ? 400 : 3;
        expect(report).toMatchObject({ rowsRead: n, imported: n, rejected: 0 });
        expect(people.map((p) => [p.email, p.firstName])).toEqual(
          Array.from({ length: n }, (_v, i) => [`p${i}@example.org`, `Pé${i}`]),
        );
      });
    }
  }
});

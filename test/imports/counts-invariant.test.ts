import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dryRun, type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

let s: Scratch;
beforeAll(async () => {
  s = await scratch();
});
afterAll(async () => {
  await s.cleanup();
});

const POOL = ["ann@x.org", "bob@x.org", "cy@x.org", "dee@x.org"];
const messyChar = fc.constantFrom("a", "é", "Z", ",", ";", '"', "\n", "\r\n", " ", "\t", "'", "=", "😀");
const messyText = fc.string({ unit: messyChar, maxLength: 12 });
const email = fc.oneof(
  fc.constantFrom(...POOL),
  fc.constantFrom(...POOL).map((e) => ` ${e.toUpperCase()} `),
  fc.constantFrom("", "x@", "not an email", "@x.org"),
  messyText,
);
const row = fc.record({
  email,
  name: messyText,
  notes: messyText,
  /** Cells added (+) or dropped (-) to make the row ragged. */
  ragged: fc.oneof(
    { weight: 5, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: -2, max: 2 }) },
  ),
  eol: fc.constantFrom("\n", "\r\n", "\r"),
});

function cell(v: string): string {
  return /[",\r\n]|^\s|\s$/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

describe("the counts always add up", () => {
  it("rows read = imported + rejected + merged duplicates, over generated messy files", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { maxLength: 40 }),
        fc.integer({ min: 1, max: 7 }),
        async (rows, batchSize) => {
          let text = "Email,Name,Notes\n";
          let expectedRows = 0;
          for (const r of rows) {
            let cells = [r.email, r.name, r.notes];
            if (r.ragged > 0) cells = [...cells, ...Array.from({ length: r.ragged }, () => "x")];
            if (r.ragged < 0) cells = cells.slice(0, 3 + r.ragged);
            if (!cells.every((c) => c.trim() === "")) expectedRows++;
            text += cells.map(cell).join(",") + r.eol;
          }
          const file = await s.file(`p-${Math.random().toString(36).slice(2)}.csv`, text);
          const { report, rejects, people } = await dryRun(s, file, simpleDefinition({ batchSize }));
          expect(report.rowsRead).toBe(expectedRows);
          expect(report.imported + report.rejected + report.duplicates).toBe(report.rowsRead);
          expect(people).toHaveLength(report.imported);
          expect(Math.max(0, rejects.length - 1)).toBe(report.rejected);
          const emails = people.map((p) => String(p.email));
          expect(new Set(emails).size).toBe(emails.length);
          expect(Object.values(report.rejectedByReason).reduce((a, b) => a + b, 0)).toBe(report.rejected);
          expect(report.batches).toBe(Math.ceil(report.imported / batchSize));
          expect(report.warnings.filter((w) => w.startsWith("counts"))).toEqual([]);
        },
      ),
      { numRuns: 60 },
    );
  });
});

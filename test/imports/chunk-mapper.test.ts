import { readFile } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { ChunkMapper } from "../../src/imports/chunk-mapper.ts";
import { ImportFileError } from "../../src/imports/index.ts";
import { unpackChunk } from "../../src/imports/mapped-transport.ts";
import { MissingIdentifierError } from "../../src/imports/missing-identifier-error.ts";
import { stampOf } from "../../src/imports/sent-stamps.ts";
import { tokenFingerprint } from "../../src/imports/sent-state.ts";
import { dryRun, importHarness, paddedPeople, type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

let s: Scratch;
beforeEach(async () => {
  s = await scratch();
});
afterEach(async () => {
  await s.cleanup();
});

/** Every path of the row loop: skipped and blank rows, populations, dropped values, rejects, opt-ins, duplicates. */
const definition = ImportJobDefinition.parse({
  kind: "import",
  target: {
    studyId: "study_1",
    population: {
      column: "Panel",
      values: { a: "population_1", b: "population_2" },
      default: "population_1",
    },
  },
  source: { skipRows: 1 },
  invalidOptionalValues: "drop",
  columns: [
    { column: "Email", to: "email", transforms: ["lowercase"] },
    { column: "Name", to: "firstName" },
    { column: "Phone", to: "phone", transforms: ["phone"] },
    { column: "Opted Out", to: "isOptedOut" },
  ],
});

function messyFile(rows: number): string {
  const lines = ["Exported by the CRM on 2026-11-26", "", "Email,Name,Phone,Opted Out,Panel"];
  for (let i = 0; i < rows; i++) {
    if (i % 101 === 0) lines.push("");
    const email = i % 53 === 0 ? `not-an-email-${i}` : `P${i % 1700}@Example.org`;
    const phone =
      i % 7 === 0
        ? "12"
        : i % 11 === 0
          ? "(415) 555-0100"
          : `+44 20 7946 ${String(i % 10_000).padStart(4, "0")}`;
    const optedOut = i % 13 === 0 ? "no" : i % 17 === 0 ? "yes" : "";
    lines.push(`${email},Name ${i},${phone},${optedOut},${i % 3 === 0 ? "b" : "a"}`);
  }
  return `${lines.join("\n")}\n`;
}

describe("rows mapped on the parse thread", () => {
  it("give the same people, rejects, warnings and counts as rows mapped on the main thread", async () => {
    const text = messyFile(2400);
    const inThread = await dryRun(s, await s.file("a.csv", text), definition, false);
    const inWorker = await dryRun(s, await s.file("b.csv", text), definition, true);

    expect(inThread.people.length).toBeGreaterThan(1000);
    expect(inWorker.bodies).toEqual(inThread.bodies);
    expect(inWorker.rejects).toEqual(inThread.rejects);
    const sameAcrossRuns = (r: typeof inThread.report) => {
      const {
        job: _j,
        file: _f,
        durationMs: _d,
        phasesMs: _p,
        rowsPerSecond: _s,
        startedAt: _a,
        rejectsFile: _r,
        requestsFile: _q,
        warningsFile: _w,
        ...rest
      } = r as typeof r & Record<string, unknown>;
      return rest;
    };
    expect(sameAcrossRuns(inWorker.report)).toEqual(sameAcrossRuns(inThread.report));
    // Each path of the loop was taken.
    const r = inThread.report;
    expect(r.rejected).toBeGreaterThan(0);
    expect(r.duplicates).toBeGreaterThan(0);
    expect(r.blankRows).toBeGreaterThan(0);
    expect(r.optInsHeldBack).toBeGreaterThan(0);
    expect(r.droppedValues).toBeGreaterThan(0);
    expect(r.phonesWithoutCountry).toBeGreaterThan(0);
    expect(new Set(inThread.bodies.map((b) => b.populationId)).size).toBe(2);
    const warningsOf = async (report: typeof r) => await readFile(report.warningsFile as string, "utf8");
    expect((await warningsOf(inWorker.report)).split("\n").length).toBeGreaterThan(100);
    expect(await warningsOf(inWorker.report)).toBe(await warningsOf(inThread.report));
  });

  it("stops at a header the column plan refuses with the plan's own error, as on the main thread", async () => {
    const text = `Mail,Name\n${"a@x.org,Ann\n".repeat(10)}`;
    const preset = ImportJobDefinition.parse({
      kind: "import",
      target: { studyId: "study_1" },
      preset: "hubspot",
    });
    const failure = (file: string, def: ImportJobDefinition, worker: boolean) =>
      dryRun(s, file, def, worker).then(
        () => undefined,
        (e: unknown) => e as ImportFileError,
      );
    for (const def of [definition, preset]) {
      const inWorker = await failure(await s.file("h1.csv", text), def, true);
      const inThread = await failure(await s.file("h2.csv", text), def, false);
      expect(inWorker).toBeInstanceOf(ImportFileError);
      expect(inWorker?.constructor).toBe(inThread?.constructor);
      expect(inWorker?.message.replace("h1.csv", "h2.csv")).toBe(inThread?.message);
    }
    const err = await failure(await s.file("h3.csv", text), preset, true);
    expect(err).toBeInstanceOf(MissingIdentifierError);
  });
});

describe("ChunkMapper", () => {
  it("stamps each valid row as the main thread stamps a person of one row", () => {
    const rows = messyFile(300)
      .split("\n")
      .slice(2)
      .filter((l) => l !== "")
      .map((l) => l.split(","));
    const mapper = new ChunkMapper(ImportJobDefinition.parse({ ...definition, source: {} }), {
      stamps: true,
      maxChars: 4000,
    });
    const chunks = [
      ...mapper.map({ firstRow: 1, length: rows.length, bytesRead: 0, cells: (i) => rows[i] as string[] }),
    ];
    expect(chunks.length).toBeGreaterThan(2);
    let compared = 0;
    for (const m of chunks) {
      expect(m.people.length).toBeLessThan(4000 + 400);
      let valid = 0;
      for (const r of unpackChunk(m)) {
        if (!r.valid) continue;
        const { population, person, key } = r;
        const onMain = stampOf({ population, entry: { rows: [r.row], person }, key }, "email");
        expect([...(r.stamp as Uint32Array)]).toEqual([...(onMain as Uint32Array)]);
        valid++;
        compared++;
      }
      expect(m.stamps.length).toBe(valid * 4);
    }
    expect(compared).toBeGreaterThan(250);
  });
});

describe("change-only runs whose rows were stamped on the parse thread", () => {
  const h = importHarness();
  const changes = () => ({
    redis: h.redis.redis,
    prefix: h.redis.prefix,
    service: { baseUrl: h.emu.baseUrl, tokenFingerprint: tokenFingerprint(h.emu.token) },
    full: false,
  });

  it("find everyone unchanged, whichever thread mapped either run", async () => {
    // 12,000 rows of ~400 bytes: a file read (and mapped) on the parse thread unless told otherwise.
    const file = await paddedPeople(h.s, "stamped", 12_000);
    const def = simpleDefinition();
    const first = await h.run(file, def, { changes: changes(), parseInWorker: true });
    expect(first).toMatchObject({ imported: 12_000, changeState: "first" });
    const sent = await h.importCalls();

    const onMain = await h.run(file, def, { changes: changes(), parseInWorker: false, force: true });
    expect(onMain).toMatchObject({ imported: 0, unchanged: 12_000, changeState: "compared" });
    const onThread = await h.run(file, def, { changes: changes(), parseInWorker: true, force: true });
    expect(onThread).toMatchObject({ imported: 0, unchanged: 12_000, changeState: "compared" });
    expect(await h.importCalls()).toBe(sent);
  }, 60_000);
});

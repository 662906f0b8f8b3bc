import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ImportJobDefinition, type ImportJobDefinitionInput } from "../../src/config/import-job.ts";
import { RecruitSyncError } from "../../src/errors/index.ts";
import { type ImportReport, runImport, tokenFingerprint } from "../../src/imports/index.ts";
import { deleteKeysByPrefix } from "../../src/runtime/delete-keys.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import { type Scratch, scratch } from "./fixtures.ts";
import { runKillChild } from "./helpers.ts";

let emu: TestEmulator;
let redis: TestRedis;
let s: Scratch;
beforeEach(async () => {
  emu = await startTestEmulator();
  redis = await withTestRedis();
  s = await scratch();
});
afterEach(async () => {
  await emu.close();
  await redis.cleanup();
  await s.cleanup();
});

// Two populations: a population's last, partly filled batch is cut when the file ends, so a run that
// leaves the unchanged out numbers its batches in another order than a run that sends everyone.
const definitionInput: ImportJobDefinitionInput = {
  kind: "import",
  target: {
    studyId: "study_4",
    population: { column: "Panel", values: { a: "population_1", b: "population_2" } },
  },
  columns: [
    { column: "Email", to: "email" },
    { column: "Name", to: "firstName" },
  ],
  batchSize: 5,
};
const definition = ImportJobDefinition.parse(definitionInput);

/** People 1–10 in panel a, 11–30 in panel b, in that order; `name` gives each one's name. */
type Person = [id: number, name: string];
const email = (i: number) => `resumecmp${i}@example.net`;
const panel = (i: number) => (i <= 10 ? "a" : "b");
const write = (file: string, people: Person[]) =>
  s.file(file, `Email,Name,Panel\n${people.map(([i, n]) => `${email(i)},${n},${panel(i)}`).join("\n")}\n`);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_v, k) => from + k);

const importCalls = async () => (await emu.requests()).byRoute.importParticipants?.["200"] ?? 0;
const changes = () => ({
  redis: redis.redis,
  prefix: redis.prefix,
  service: { baseUrl: emu.baseUrl, tokenFingerprint: tokenFingerprint(emu.token) },
  full: false,
});
const run = (file: string, extra: Partial<Parameters<typeof runImport>[0]> = {}) =>
  runImport({
    file,
    definition,
    client: emu.client,
    rejectsFile: path.join(s.dir, "rejects.csv"),
    ledger: { redis: redis.redis, prefix: redis.prefix },
    workDir: s.dir,
    changes: changes(),
    ...extra,
  });

/** Each person of the file is in the service, in their panel's population, with the file's name. */
function expectInService(people: Person[]): void {
  const wrong: string[] = [];
  for (const [i, name] of people) {
    const found = emu.emulator.store.peopleByEmail(email(i))[0];
    const population = panel(i) === "a" ? "population_1" : "population_2";
    if (found?.firstName !== name || !found.populationIds.includes(population)) {
      wrong.push(`${i}: ${found === undefined ? "missing" : `${found.firstName} in ${found.populationIds}`}`);
    }
  }
  expect(wrong).toEqual([]);
}

/** Every row read is imported, unchanged, merged or rejected. */
function expectEveryRowCounted(report: ImportReport, rows: number): void {
  expect(report.rowsRead).toBe(rows);
  expect(report.imported + report.unchanged + report.duplicates + report.rejected).toBe(rows);
}

/** The change state's keys, `<prefix>:sent:…`: all of them, or only the layout that makes it comparable. */
async function loseChangeState(how: "every key" | "the layout"): Promise<void> {
  const pattern = `${redis.prefix}:sent:`;
  if (how === "every key") {
    expect(await deleteKeysByPrefix(redis.redis, pattern)).toBeGreaterThan(1);
    return;
  }
  // Every page of the scan: the Redis the tests share may hold more keys than one page covers.
  const metas: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.redis.scan(cursor, "MATCH", `${pattern}*:meta`, "COUNT", 10_000);
    metas.push(...keys);
    cursor = next;
  } while (cursor !== "0");
  expect(metas).toHaveLength(1);
  await redis.redis.del(...metas);
}

/** Runs the change-only import in a child process that kills itself (SIGKILL) once `killAfter` batches are answered. */
function runUntilKilled(file: string, killAfter: number): Promise<NodeJS.Signals | null> {
  return runKillChild({
    file,
    definition: definitionInput,
    baseUrl: emu.baseUrl,
    token: emu.token,
    redisUrl: REDIS_URL,
    prefix: redis.prefix,
    rejectsFile: path.join(s.dir, "child.rejects.csv"),
    workDir: s.dir,
    killAfter,
    changes: true,
  });
}

describe("resuming a change-only import", () => {
  // The first file: people 4–10 and 11–30. The second adds 1–3 (panel a) and renames 11–20 (panel b):
  // comparing, it sends b 11–15 as batch 0, b 16–20 as batch 1 and a 1–3 last, as batch 2.
  const before: Person[] = [...range(4, 30)].map((i) => [i, `Person ${i}`]);
  const after: Person[] = range(1, 30).map((i) => [i, i >= 11 && i <= 20 ? `Renamed ${i}` : `Person ${i}`]);

  it.each(["every key", "the layout"] as const)(
    "sends everyone when a comparing attempt was killed and the retry cannot compare (the change state lost %s): no batch is skipped by a number the comparison gave",
    async (lost) => {
      expect(await run(await write("before.csv", before))).toMatchObject({
        status: "completed",
        changeState: "first",
        imported: 27,
      });
      const second = await write("after.csv", after);
      const calls = await importCalls();
      expect(await runUntilKilled(second, 2)).toBe("SIGKILL");
      expect(await importCalls()).toBe(calls + 2);

      await loseChangeState(lost);
      const retry = await run(second);
      expectInService(after);
      expectEveryRowCounted(retry, 30);
      // Numbered afresh over everyone: nothing resumed, everyone sent again (a resend converges).
      expect(retry).toMatchObject({
        status: "completed",
        changeState: "first",
        batchesResumed: 0,
        imported: 30,
      });
    },
  );

  it("still compares when the retry of a killed comparing attempt finds the state: the people the attempt sent are unchanged, the rest are sent", async () => {
    await run(await write("before.csv", before));
    const second = await write("after.csv", after);
    expect(await runUntilKilled(second, 2)).toBe("SIGKILL");
    const calls = await importCalls();
    const retry = await run(second);
    expectInService(after);
    expectEveryRowCounted(retry, 30);
    // b 11–20 went in the attempt's two batches; a 1–3 are what it had left.
    expect(retry).toMatchObject({
      status: "completed",
      changeState: "compared",
      batchesResumed: 0,
      imported: 3,
      unchanged: 27,
    });
    expect(await importCalls()).toBe(calls + 1);
  });

  it("skips nothing by index when a first run was stopped and its retry compares, because another run of the mapping finished meanwhile", async () => {
    const people: Person[] = range(1, 30).map((i) => [i, `Person ${i}`]);
    const file = await write("people.csv", people);
    const stop = new AbortController();
    let answered = 0;
    const stopped = await run(file, {
      signal: stop.signal,
      onBatch: () => {
        if (++answered === 2) stop.abort(new Error("stopped by the test"));
      },
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(stopped).toBeInstanceOf(RecruitSyncError);
    expect((stopped as RecruitSyncError).report).toMatchObject({ changeState: "first", imported: 10 });

    // Another file of the same mapping finishes first: the state can be compared from now on.
    const other: Person[] = range(31, 35).map((i) => [i, `Person ${i}`]);
    expect(await run(await write("other.csv", other))).toMatchObject({
      status: "completed",
      changeState: "first",
    });

    const retry = await run(file);
    expectInService([...people, ...other]);
    expectEveryRowCounted(retry, 30);
    // a 1–10, the stopped run's two batches, were kept in the state when it stopped.
    expect(retry).toMatchObject({
      status: "completed",
      changeState: "compared",
      batchesResumed: 0,
      unchanged: 10,
      imported: 20,
    });
  });
});

import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ImportJobDefinitionInput } from "../../src/config/import-job.ts";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { runImport, tokenFingerprint } from "../../src/imports/index.ts";
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

const definitionInput: ImportJobDefinitionInput = {
  kind: "import",
  target: { studyId: "study_4" },
  columns: [
    { column: "Email", to: "email" },
    { column: "Name", to: "firstName" },
  ],
  batchSize: 5,
};
const definition = ImportJobDefinition.parse(definitionInput);

async function people(n: number): Promise<string> {
  const lines = ["Email,Name"];
  for (let i = 1; i <= n; i++) lines.push(`resume${i}@example.net,Person ${i}`);
  return s.file("people.csv", `${lines.join("\n")}\n`);
}

const importCalls = async () => (await emu.requests()).byRoute.importParticipants?.["200"] ?? 0;

function runUntilKilled(file: string, killAfter: number, changes = false): Promise<NodeJS.Signals | null> {
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
    changes,
  });
}

describe("resuming after a crash", () => {
  it("sends exactly the batches a killed run had not finished, then recognises the file", async () => {
    const file = await people(23); // 5 batches: 5+5+5+5+3
    expect(await runUntilKilled(file, 2)).toBe("SIGKILL");
    expect(await importCalls()).toBe(2);

    const options = {
      file,
      definition,
      client: emu.client,
      rejectsFile: path.join(s.dir, "rejects.csv"),
      ledger: { redis: redis.redis, prefix: redis.prefix },
      workDir: s.dir,
    };
    const resumed = await runImport(options);
    expect(resumed).toMatchObject({
      status: "completed",
      rowsRead: 23,
      imported: 23,
      batches: 5,
      batchesResumed: 2,
      requests: 3,
    });
    expect(resumed.importIds).toHaveLength(5);
    expect(await importCalls()).toBe(5);
    const snap = await emu.snapshot();
    expect(
      snap.participants.filter((p) => p.studyId === "study_4" && p.email?.startsWith("resume")),
    ).toHaveLength(23);
    expect(snap.imports.filter((i) => i.studyId === "study_4").map((i) => i.count)).toEqual([5, 5, 5, 5, 3]);

    const again = await runImport(options);
    expect(again.status).toBe("skipped");
    expect(again.imported).toBe(23);
    expect(await importCalls()).toBe(5);

    const forced = await runImport({ ...options, force: true });
    expect(forced).toMatchObject({ status: "completed", batchesResumed: 0, requests: 5 });
    expect(await importCalls()).toBe(10);
  });

  it("leaves a change-only state that holds everyone after a killed first run and its retry", async () => {
    const file = await people(23);
    // Killed after two batches: the stamps it gathered were only in memory.
    expect(await runUntilKilled(file, 2, true)).toBe("SIGKILL");
    const changes = {
      redis: redis.redis,
      prefix: redis.prefix,
      service: { baseUrl: emu.baseUrl, tokenFingerprint: tokenFingerprint(emu.token) },
      full: false,
    };
    const options = {
      definition,
      client: emu.client,
      rejectsFile: path.join(s.dir, "rejects.csv"),
      ledger: { redis: redis.redis, prefix: redis.prefix },
      workDir: s.dir,
      changes,
    };
    const retry = await runImport({ ...options, file });
    expect(retry).toMatchObject({
      status: "completed",
      changeState: "first",
      batchesResumed: 2,
      requests: 3,
    });
    // The same people in another order: the batches the retry took from the ledger are in the state too.
    const lines = (await readFile(file, "utf8")).trimEnd().split("\n");
    const reordered = await s.file(
      "reordered.csv",
      `${[lines[0], ...lines.slice(1).reverse()].join("\n")}\n`,
    );
    const next = await runImport({ ...options, file: reordered });
    expect(next).toMatchObject({ changeState: "compared", unchanged: 23, imported: 0, requests: 0 });
    expect(await importCalls()).toBe(5);
  });

  it("leaves everyone with their merged data after killed change-only runs of a file with people in several rows, and then sends nobody for the same file", async () => {
    // 20 people in 24 rows: 4, 9 and 15 have an earlier row just before their own, 20 the file's first row.
    const rows = (name: (i: number) => string): [number, string][] => [
      [20, "Early 20"],
      ...Array.from({ length: 19 }, (_v, k) => k + 1).flatMap((i): [number, string][] =>
        [4, 9, 15].includes(i)
          ? [
              [i, `Early ${i}`],
              [i, name(i)],
            ]
          : [[i, name(i)]],
      ),
      [20, name(20)],
    ];
    const write = (name: string, list: [number, string][]) =>
      s.file(name, `Email,Name\n${list.map(([i, n]) => `resume${i}@example.net,${n}`).join("\n")}\n`);
    const expectInService = (list: [number, string][]) => {
      const last = new Map(list.map(([i, n]) => [i, n]));
      for (const [i, n] of last) {
        expect(emu.emulator.store.peopleByEmail(`resume${i}@example.net`)[0]?.firstName, `person ${i}`).toBe(
          n,
        );
      }
    };
    const options = {
      definition,
      client: emu.client,
      rejectsFile: path.join(s.dir, "rejects.csv"),
      ledger: { redis: redis.redis, prefix: redis.prefix },
      workDir: s.dir,
      changes: {
        redis: redis.redis,
        prefix: redis.prefix,
        service: { baseUrl: emu.baseUrl, tokenFingerprint: tokenFingerprint(emu.token) },
      },
    };

    // A first run killed after two batches, then its retry (resumed from the ledger).
    const firstRows = rows((i) => `Person ${i}`);
    const first = await write("first.csv", firstRows);
    expect(await runUntilKilled(first, 2, true)).toBe("SIGKILL");
    expect(await runImport({ ...options, file: first })).toMatchObject({
      status: "completed",
      changeState: "first",
      batchesResumed: 2,
    });
    expectInService(firstRows);
    const calls = await importCalls();
    expect(await runImport({ ...options, file: first, force: true })).toMatchObject({
      changeState: "compared",
      imported: 0,
      unchanged: 20,
      duplicates: 4,
      requests: 0,
    });
    expect(await importCalls()).toBe(calls);

    // 4's own row and eleven other people change: a re-import that compares, killed after two batches, then its retry.
    const renamed = [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13];
    const secondRows = rows((i) => (renamed.includes(i) ? `Renamed ${i}` : `Person ${i}`));
    const second = await write("second.csv", secondRows);
    expect(await runUntilKilled(second, 2, true)).toBe("SIGKILL");
    const retry = await runImport({ ...options, file: second });
    expect(retry).toMatchObject({ status: "completed", changeState: "compared", rowsRead: 24 });
    expect(retry.imported + retry.unchanged + retry.duplicates + retry.rejected).toBe(24);
    expectInService(secondRows);

    const before = await importCalls();
    expect(await runImport({ ...options, file: second, force: true })).toMatchObject({
      changeState: "compared",
      imported: 0,
      unchanged: 20,
      duplicates: 4,
      requests: 0,
    });
    expect(await importCalls()).toBe(before);
  });

  it("takes the file as new when the definition changes", async () => {
    const file = await people(6);
    const base = {
      file,
      client: emu.client,
      rejectsFile: path.join(s.dir, "rejects.csv"),
      ledger: { redis: redis.redis, prefix: redis.prefix },
      workDir: s.dir,
    };
    await runImport({ ...base, definition });
    const other = await runImport({ ...base, definition: { ...definition, batchSize: 3 } });
    expect(other).toMatchObject({ status: "completed", batches: 2, requests: 2 });
    expect(await importCalls()).toBe(4);
  });

  it("takes the file as new against another service: a rehearsal does not make the real import look done", async () => {
    const file = await people(4);
    const production = await startTestEmulator();
    try {
      const base = {
        file,
        definition,
        rejectsFile: path.join(s.dir, "rejects.csv"),
        ledger: { redis: redis.redis, prefix: redis.prefix },
        workDir: s.dir,
      };
      const rehearsal = await runImport({ ...base, client: emu.client });
      const again = await runImport({ ...base, client: emu.client });
      const real = await runImport({ ...base, client: production.client });
      expect([rehearsal.status, again.status, real.status]).toEqual(["completed", "skipped", "completed"]);
      expect((await production.requests()).byRoute.importParticipants?.["200"]).toBe(1);
    } finally {
      await production.close();
    }
  });
});

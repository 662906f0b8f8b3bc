import { hash } from "node:crypto";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ImportJobDefinition } from "../../src/config/import-job.ts";
import { RecruitSyncError } from "../../src/errors/index.ts";
import { hashValue } from "../../src/imports/file-hash.ts";
import {
  type ChangeOnlyOptions,
  hash64,
  type ImportReport,
  layoutBits,
  mappingFingerprint,
  openSentState,
  runImport,
  SENT_STATE_TTL_SECONDS,
  StampLog,
  sentStateScope,
  tokenFingerprint,
} from "../../src/imports/index.ts";
import { hash64Pair } from "../../src/imports/stamp-hash.ts";
import { ImportJobData } from "../../src/queue/job-data.ts";
import { importJobId } from "../../src/queue/job-ids.ts";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import { createProject } from "../queue/helpers.ts";
import { dryRun, type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

const csv = (ids: number[], name = (i: number) => `Name${i}`) =>
  `Email,Name,Code\n${ids.map((i) => `state${i}@example.net,${name(i)},${i < 10 ? "c" : ""}`).join("\n")}\n`;
/** The report a failed run's error carries. */
async function failureReport(run: Promise<unknown>): Promise<ImportReport> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RecruitSyncError);
  return (err as RecruitSyncError).report as ImportReport;
}
/** hash64("", 1) and hash64 of a small person with seed 2, as the third format stores them. */
const KNOWN = [2398742724, 2334761594, 1346026015, 1920068257];
const range = (from: number, to: number) => Array.from({ length: to - from }, (_v, k) => from + k);

describe("the change-only state", () => {
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

  const changes = (full = false): ChangeOnlyOptions => ({
    redis: r.redis,
    prefix: r.prefix,
    service: { baseUrl: emu.baseUrl, tokenFingerprint: tokenFingerprint(emu.token) },
    full,
  });
  let runs = 0;
  const importIds = async (ids: number[], definition = simpleDefinition(), full = false) => {
    runs++;
    return runImport({
      file: await s.file(`run-${runs}.csv`, csv(ids)),
      definition,
      client: emu.client,
      rejectsFile: path.join(s.dir, `run-${runs}.rejects.csv`),
      ledger: { redis: r.redis, prefix: r.prefix },
      changes: changes(full),
    });
  };
  const stateKeys = async () => {
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, found] = await r.redis.scan(cursor, "MATCH", `${r.prefix}:sent:*`, "COUNT", 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== "0");
    return keys.sort();
  };

  it("keys each person by hashes only, under a scope of service, token fingerprint, study, population, identifier and mapping, expiring in 35 days", async () => {
    const definition = simpleDefinition();
    await importIds(range(0, 300), definition);
    const scope = sentStateScope(
      { baseUrl: emu.baseUrl, tokenFingerprint: tokenFingerprint(emu.token) },
      definition,
    );
    const keys = await stateKeys();
    const bits = layoutBits(300);
    expect(keys).toEqual(
      [
        `${r.prefix}:sent:{${scope}}:meta`,
        ...range(0, 2 ** bits).map((b) => `${r.prefix}:sent:{${scope}}:b${bits}:${b.toString(16)}`),
      ].sort(),
    );
    let people = 0;
    for (const key of keys.filter((k) => !k.endsWith(":meta"))) {
      const fields = await r.redis.hkeysBuffer(key);
      const values = await r.redis.hvalsBuffer(key);
      expect(new Set([...fields, ...values].map((b) => b.length))).toEqual(new Set([8]));
      people += fields.length;
      const ttl = await r.redis.ttl(key);
      expect(ttl).toBeGreaterThan(SENT_STATE_TTL_SECONDS - 60);
      expect(ttl).toBeLessThanOrEqual(SENT_STATE_TTL_SECONDS);
    }
    expect(people).toBe(300);
    const dump = JSON.stringify(await Promise.all(keys.map((k) => r.redis.dump(k))));
    for (const secret of [emu.token, "state1@example.net", "Name1"]) {
      expect(keys.join("\n")).not.toContain(secret);
      expect(dump).not.toContain(secret);
    }
  });

  it("compares hundreds of people of one bucket, in any order, and finds each one's answer", async () => {
    await importIds(range(0, 50));
    expect(layoutBits(50)).toBe(0);
    // 600 people against a one-bucket state: one script call, the bucket asked in parts of 256.
    const shuffled = range(0, 600).sort((a, b) => ((a * 7919) % 600) - ((b * 7919) % 600));
    runs++;
    const second = await runImport({
      file: await s.file(
        `run-${runs}.csv`,
        csv(shuffled, (i) => (i < 5 ? `Renamed${i}` : `Name${i}`)),
      ),
      definition: simpleDefinition(),
      client: emu.client,
      rejectsFile: path.join(s.dir, `run-${runs}.rejects.csv`),
      ledger: { redis: r.redis, prefix: r.prefix },
      changes: changes(),
    });
    expect(second).toMatchObject({ changeState: "compared", imported: 555, unchanged: 45 });
    for (const i of [0, 4]) {
      const [person] = emu.emulator.store.peopleByEmail(`state${i}@example.net`);
      expect(person?.firstName).toBe(`Renamed${i}`);
    }
  });

  it("keeps every bucket alive after a run that compared, though it wrote none", async () => {
    await importIds(range(0, 300));
    const buckets = (await stateKeys()).filter((k) => !k.endsWith(":meta"));
    for (const key of buckets) await r.redis.expire(key, 100);
    const next = await importIds([...range(0, 300)].reverse());
    expect(next).toMatchObject({ changeState: "compared", unchanged: 300, requests: 0 });
    for (const key of buckets) expect(await r.redis.ttl(key)).toBeGreaterThan(SENT_STATE_TTL_SECONDS - 60);
  });

  it("names another scope when the service, the token, the study, the population, the identifier or the mapping changes", () => {
    const service = {
      baseUrl: "http://127.0.0.1:4010/api/public/v1",
      tokenFingerprint: tokenFingerprint("t1"),
    };
    const base = simpleDefinition({ name: "people" });
    const scope = sentStateScope(service, base);
    const other = (svc: typeof service, def: ImportJobDefinition) => sentStateScope(svc, def);
    expect(other({ ...service, baseUrl: "https://service.example/api/public/v1" }, base)).not.toBe(scope);
    expect(other({ ...service, tokenFingerprint: tokenFingerprint("t2") }, base)).not.toBe(scope);
    expect(other(service, simpleDefinition({ name: "people", target: { studyId: "study_2" } }))).not.toBe(
      scope,
    );
    expect(
      other(
        service,
        simpleDefinition({ name: "people", target: { studyId: "study_1", population: { id: "pop_1" } } }),
      ),
    ).not.toBe(scope);
    expect(
      other(
        service,
        simpleDefinition({
          name: "people",
          target: { studyId: "study_1", identifier: "phone" },
          columns: [{ column: "Phone", to: "phone" }],
        }),
      ),
    ).not.toBe(scope);
    expect(other(service, simpleDefinition({ name: "people", ignoreColumns: ["Code"] }))).not.toBe(scope);
    // What does not change what is sent to whom keeps the state.
    expect(other({ ...service, baseUrl: `${service.baseUrl}/` }, base)).toBe(scope);
    expect(other(service, simpleDefinition({ name: "renamed", batchSize: 100, description: "x" }))).toBe(
      scope,
    );
    expect(other(service, simpleDefinition({ name: "people", source: { encoding: "windows-1252" } }))).toBe(
      scope,
    );
    expect(other(service, simpleDefinition({ name: "people", changesOnly: true }))).toBe(scope);
  });

  it("records only the people the service accepted: a refused person is sent again by the next run", async () => {
    const definition = simpleDefinition({
      columns: [
        { column: "Email", to: "email" },
        { column: "Name", to: "firstName" },
        // The emulator refuses a property it does not know, person by person.
        { column: "Code", to: { propertyId: "property_404" } },
      ],
    });
    const first = await importIds(range(0, 100), definition);
    expect(first.rejected).toBe(10);
    expect(first.imported).toBe(90);
    const second = await importIds([...range(0, 100)].reverse(), definition);
    expect(second.changeState).toBe("compared");
    expect(second.unchanged).toBe(90);
    expect(second.rejected).toBe(10);
    expect(second.imported).toBe(0);
  });

  it("moves to wider buckets when the people outgrow them, and still compares afterwards", async () => {
    await importIds(range(0, 10));
    expect((await stateKeys()).filter((k) => /:b0:/.test(k))).toHaveLength(1);
    const grown = await importIds(range(0, 300));
    expect(grown.unchanged).toBe(10);
    expect(grown.imported).toBe(290);
    const keys = await stateKeys();
    expect(keys.filter((k) => /:b0:/.test(k))).toEqual([]);
    expect(keys.filter((k) => new RegExp(`:b${layoutBits(300)}:`).test(k))).toHaveLength(
      2 ** layoutBits(300),
    );
    const again = await importIds([...range(0, 300)].reverse());
    expect(again.unchanged).toBe(300);
    expect(again.requests).toBe(0);
  });

  it("resumes an interrupted first run from the ledger, so its report counts everyone it sent", async () => {
    // Rows 0–9 go to a population the service does not have: that batch, sent last, fails the run.
    const definition = simpleDefinition({
      batchSize: 50,
      target: {
        studyId: "study_1",
        population: { column: "Code", values: { c: "population_404" }, default: "population_1" },
      },
    });
    const file = await s.file("interrupted.csv", csv(range(0, 110)));
    const run = () =>
      runImport({
        file,
        definition,
        client: emu.client,
        rejectsFile: path.join(s.dir, "interrupted.rejects.csv"),
        ledger: { redis: r.redis, prefix: r.prefix },
        changes: changes(),
      });
    const failed = await failureReport(run());
    expect(failed.imported).toBe(100);
    const retry = await failureReport(run());
    expect(retry).toMatchObject({ changeState: "first", batchesResumed: 2, imported: 100, unchanged: 0 });
  });

  it("records the batches a retry resumes from the ledger, so a first run stopped midway and finished by its retry leaves everyone in the state", async () => {
    const definition = simpleDefinition({ batchSize: 20 });
    const file = await s.file("stopped.csv", csv(range(0, 100)));
    const run = (signal?: AbortSignal, onBatch?: () => void) =>
      runImport({
        file,
        definition,
        client: emu.client,
        rejectsFile: path.join(s.dir, "stopped.rejects.csv"),
        ledger: { redis: r.redis, prefix: r.prefix },
        changes: changes(),
        ...(signal ? { signal } : {}),
        ...(onBatch ? { onBatch } : {}),
      });
    const stop = new AbortController();
    let answered = 0;
    const stopped = await failureReport(
      run(stop.signal, () => {
        if (++answered === 2) stop.abort(new Error("stopped by the test"));
      }),
    );
    expect(stopped.imported).toBeGreaterThanOrEqual(40);
    expect(stopped.imported).toBeLessThan(100);
    // A stopped run keeps what it gathered, but not the layout: nothing is compared until a run finishes.
    expect((await stateKeys()).filter((k) => k.endsWith(":meta"))).toEqual([]);
    const retry = await run();
    expect(retry.batchesResumed).toBeGreaterThanOrEqual(2);
    expect(retry.changeState).toBe("first");
    const again = await importIds([...range(0, 100)].reverse(), definition);
    expect(again).toMatchObject({ changeState: "compared", unchanged: 100, imported: 0, requests: 0 });
  });

  it("writes a first run's stamps as they gather past the flush size, records arriving meanwhile included, and a person sent again keeps the last", async () => {
    const open = (mode: "compare" | "full") =>
      openSentState({
        redis: r.redis,
        prefix: r.prefix,
        scope: "flush-test",
        identifier: "email",
        mode,
        people: 300,
        readOnly: false,
        flushAt: 16,
      });
    const person = (i: number, name = `Name${i}`) => ({
      population: null,
      key: `p${i}@example.net`,
      entry: { rows: [i], person: JSON.stringify({ email: `p${i}@example.net`, firstName: name }) },
    });
    const first = await open("compare");
    expect(first.changeState).toBe("first");
    const people = range(0, 300).map((i) => person(i));
    await first.sieve(people);
    // Batches of 20 answered two at a time: a flush starts while the other batch's record adds to the log.
    const batches = range(0, 15).map((b) => people.slice(b * 20, b * 20 + 20).map((p) => p.entry));
    for (let b = 0; b < batches.length; b += 2) {
      await Promise.all(batches.slice(b, b + 2).map((entries) => first.record(entries)));
    }
    expect((await stateKeys()).length).toBeGreaterThan(0);
    // Person 7 sent again with a new name after the flushes: the state must hold the new one.
    const again = person(7, "Renamed");
    await first.sieve([again]);
    await first.record([again.entry]);
    await first.finish();

    const second = await open("compare");
    expect(second.changeState).toBe("compared");
    const send = await second.sieve([
      ...range(0, 300).map((i) => person(i, i === 7 ? "Renamed" : `Name${i}`)),
      person(300),
    ]);
    expect(send.flatMap((verdict, i) => (verdict === "send" ? [i] : []))).toEqual([300]);
  });

  it("fails the run when a first run's write of its stamps fails behind the sending, without an unhandled rejection", async () => {
    const state = await openSentState({
      redis: r.redis,
      prefix: r.prefix,
      scope: "failing-flush",
      identifier: "email",
      mode: "compare",
      people: 300,
      readOnly: false,
      flushAt: 16,
    });
    // Every bucket of the layout (3 bits for 300 people) already holds a string: each HSET meets WRONGTYPE.
    for (let b = 0; b < 8; b++)
      await r.redis.set(`${r.prefix}:sent:{failing-flush}:b3:${b.toString(16)}`, "x");
    const people = range(0, 300).map((i) => ({
      population: null,
      key: `f${i}@example.net`,
      entry: { rows: [i], person: JSON.stringify({ email: `f${i}@example.net` }) },
    }));
    await state.sieve(people);
    // The first write starts behind the batch that filled it; the batch after the next fill meets its failure.
    await expect(
      (async () => {
        for (let b = 0; b < 15; b++)
          await state.record(people.slice(b * 20, b * 20 + 20).map((p) => p.entry));
      })(),
    ).rejects.toThrow(/WRONGTYPE/);
    await expect(state.finish()).rejects.toThrow(/WRONGTYPE/);
  });

  it("writes a first run's stamps bucket by bucket, in the order they were accepted", () => {
    const log = new StampLog();
    const stamp = (bucketTop: number, field: number, digest: number) =>
      Uint32Array.of(bucketTop * 2 ** 28 + field, field, digest, 0);
    // Bucket 3 twice for one person (sent again): the later digest must come last.
    log.push(stamp(3, 1, 10));
    log.push(stamp(0, 2, 20));
    log.push(stamp(3, 1, 11));
    log.push(stamp(15, 4, 40));
    for (let i = 0; i < 5; i++) log.push(stamp(7, 100 + i, i));
    const parts = [...log.byBucket(4, 4)];
    const flat = parts.flatMap((p) => p.buckets.map((b, k) => [b, p.counts[k]]));
    expect(flat).toEqual([
      [0, 1],
      [3, 2],
      [7, 5],
      [15, 1],
    ]);
    // No part passes 4 people unless one bucket alone does, and none splits a bucket.
    expect(parts.map((p) => p.packed.length / 16)).toEqual([3, 5, 1]);
    const digests = (p: Buffer) =>
      Array.from({ length: p.length / 16 }, (_v, k) => p.readUInt32BE(k * 16 + 8));
    expect(parts.map((p) => digests(p.packed))).toEqual([[20, 10, 11], [0, 1, 2, 3, 4], [40]]);
    expect([...new StampLog().byBucket(0, 4)]).toEqual([]);
  });

  it("never reads a state written with the first format's stamps (SHA-256): everyone is sent once, then compared", async () => {
    const definition = simpleDefinition();
    const ids = range(0, 50);
    // The people exactly as they are sent, from a dry run of the same rows.
    const { people } = await dryRun(s, await s.file("people.csv", csv(ids)), definition);
    expect(people).toHaveLength(50);
    // The state as the first format wrote it, for these very people: scope without a format,
    // field = SHA-256 of (population, identifier) after its 4 bucket bytes, value = SHA-256 of the person.
    const service = { baseUrl: emu.baseUrl, tokenFingerprint: tokenFingerprint(emu.token) };
    const oldScope = hashValue({
      service: service.baseUrl.replace(/\/+$/, ""),
      token: service.tokenFingerprint,
      studyId: definition.target.studyId,
      population: definition.target.population ?? null,
      identifier: definition.target.identifier,
      mapping: mappingFingerprint(definition),
    }).slice(0, 32);
    const base = `${r.prefix}:sent:{${oldScope}}`;
    await r.redis.hset(`${base}:meta`, "bits", "0", "at", new Date().toISOString());
    for (const person of people) {
      const who = hash("sha256", `\u0000${String(person.email).toLowerCase()}`, "buffer");
      const digest = hash("sha256", JSON.stringify(person), "buffer").subarray(0, 8);
      await r.redis.hset(`${base}:b0:0`, who.subarray(4, 12), digest);
    }
    const upgraded = await importIds(ids, definition);
    expect(upgraded).toMatchObject({ changeState: "first", imported: 50, unchanged: 0 });
    expect(sentStateScope(service, definition)).not.toBe(oldScope);
    const next = await importIds([...ids].reverse(), definition);
    expect(next).toMatchObject({ changeState: "compared", imported: 0, unchanged: 50, requests: 0 });
  });

  it("stamps with a 64-bit hash whose words are a stored format", () => {
    const out = new Uint32Array(4);
    hash64("", 1, out, 0);
    hash64('{"email":"a@example.net","firstName":"Chloé"}', 2, out, 2);
    // Known answers: a change to hash64 that moves them needs a new SENT_STATE_FORMAT.
    expect([...out]).toEqual(KNOWN);
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      hash64(`person${i}@example.net`, 7, out, 0);
      seen.add(`${out[0]}:${out[1]}`);
    }
    expect(seen.size).toBe(20_000);
  });

  it("hashes a (population, identifier) pair as the joined text, and a long text whole", () => {
    const pair = new Uint32Array(2);
    const joined = new Uint32Array(2);
    for (const [population, key] of [
      ["", "ann@example.net"],
      ["pop_1", "+14155550100"],
      ["Zürich", "Chloé@example.net"],
    ] as const) {
      hash64Pair(population, key, 9, pair, 0);
      hash64(`${population}\u0000${key}`, 9, joined, 0);
      expect([...pair]).toEqual([...joined]);
    }
    // Longer than the scratch buffer at first, and changed in its last byte only: another stamp.
    const long = `{"note":"${"é".repeat(5000)}"}`;
    const a = new Uint32Array(2);
    const b = new Uint32Array(2);
    hash64(long, 3, a, 0);
    hash64(`${long.slice(0, -2)}!}`, 3, b, 0);
    expect(a[0] === b[0] || a[1] === b[1]).toBe(false);
    hash64(long, 3, b, 0);
    expect([...b]).toEqual([...a]);
  });

  it("sends everyone and records them when the run is full", async () => {
    await importIds(range(0, 50));
    const full = await importIds([...range(0, 50)].reverse(), simpleDefinition(), true);
    expect(full.changeState).toBe("full");
    expect(full.imported).toBe(50);
    // Another order: the same bytes as the first run would be skipped by the ledger.
    const next = await importIds([...range(25, 50), ...range(0, 25)]);
    expect(next.unchanged).toBe(50);
    expect(next.requests).toBe(0);
  });
});

describe("--full in job data", () => {
  it("is false unless asked, and a full run gets a job id of its own", async () => {
    const data = { kind: "import", job: "people", file: "/tmp/people.csv" };
    expect(ImportJobData.parse(data).full).toBe(false);
    expect(ImportJobData.parse({ ...data, full: true }).full).toBe(true);
    const s = await scratch();
    try {
      const file = await s.file("people.csv", csv([1, 2]));
      const plain = await importJobId(file, {}, "http://x", {});
      const full = await importJobId(file, {}, "http://x", { full: true });
      expect(full.jobId).not.toBe(plain.jobId);
    } finally {
      await s.cleanup();
    }
  });
});

describe("a dry run without Redis", () => {
  it("says in one warning line that it cannot tell who is unchanged, and counts everyone", async () => {
    const emu = await startTestEmulator();
    const project = await createProject({
      redisUrl: REDIS_URL,
      emulator: emu,
      jobs: {
        people: {
          kind: "import",
          target: { studyId: "study_1" },
          columns: [{ column: "Email", to: "email" }],
        },
      },
    });
    try {
      const file = await project.file("people.csv", csv(range(0, 5)));
      const res = await runCli(
        ["--config", project.configDir, "import", file, "--job", "people", "--inline", "--dry-run"],
        {
          env: { ...project.env, REDIS_URL: "redis://127.0.0.1:1" },
          cwd: project.dir,
        },
      );
      expect(res.code, res.stderr).toBe(0);
      const warnings = res.stdout.split("\n").filter((l) => l.includes("cannot tell who is unchanged"));
      expect(warnings).toEqual([
        "  warning: no Redis at redis://127.0.0.1:1: cannot tell who is unchanged since the last run, so everyone is counted as sent",
      ]);
      expect(res.stdout).toContain("would import 5");
    } finally {
      await emu.close();
      await project.cleanup();
    }
  });
});

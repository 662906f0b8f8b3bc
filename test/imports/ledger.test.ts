import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type BatchNumbering,
  createRedisLedger,
  type ImportReport,
  type LedgerBatch,
} from "../../src/imports/index.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";

let r: TestRedis;
beforeEach(async () => {
  r = await withTestRedis();
});
afterEach(async () => {
  await r.cleanup();
});

const batch: LedgerBatch = {
  status: "done",
  importIds: ["import_1"],
  imported: 5,
  rejected: [],
  duplicates: 0,
  at: "2026-11-30T00:00:00.000Z",
};
const ledgerOf = (unrecordedNumbering?: BatchNumbering) =>
  createRedisLedger({
    redis: r.redis,
    prefix: r.prefix,
    fileHash: "f".repeat(64),
    definitionHash: "d".repeat(64),
    ...(unrecordedNumbering ? { unrecordedNumbering } : {}),
  });
const key = () => `${r.prefix}:import-ledger:${"f".repeat(16)}:${"d".repeat(16)}`;

describe("the import ledger", () => {
  it("keeps how a run's batches were numbered through setBatching and finish", async () => {
    const ledger = ledgerOf();
    expect(await ledger.start("people.csv", "compared")).toEqual(new Map());
    await ledger.setBatching({ first: 5, rest: 5 });
    await ledger.putBatch(0, batch);
    expect(await ledger.run()).toMatchObject({ numbered: "compared", batching: { first: 5, rest: 5 } });
    // A retry that compares too resumes nothing, and keeps the sizes and the batches it does not read.
    expect(await ledger.start("people.csv", "compared")).toEqual(new Map());
    expect(await ledger.run()).toMatchObject({ numbered: "compared", batching: { first: 5, rest: 5 } });
    expect(await r.redis.hexists(key(), "batch:0")).toBe(1);
    await ledger.finish({} as ImportReport);
    expect(await ledger.run()).toMatchObject({
      status: "done",
      numbered: "compared",
      batching: { first: 5, rest: 5 },
    });
  });

  it("forgets the batches and sizes of an attempt that compared when a run numbers over everyone", async () => {
    const ledger = ledgerOf();
    await ledger.start("people.csv", "compared");
    await ledger.setBatching({ first: 5, rest: 5 });
    await ledger.putBatch(0, batch);
    await ledger.putBatch(1, batch);
    expect(await ledger.start("people.csv", "all")).toEqual(new Map());
    const run = await ledger.run();
    expect(run).toMatchObject({ status: "running", numbered: "all" });
    expect(run?.batching).toBeUndefined();
    expect(await r.redis.hkeys(key())).toEqual(["run"]);
  });

  it("resumes by index the batches of an attempt that numbered over everyone, for a run that does too", async () => {
    const ledger = ledgerOf();
    await ledger.start("people.csv", "all");
    await ledger.setBatching({ first: 5 });
    await ledger.putBatch(0, batch);
    expect([...(await ledger.start("people.csv", "all")).keys()]).toEqual([0]);
    expect(await ledger.run()).toMatchObject({ numbered: "all", batching: { first: 5 } });
    // A retry that compares skips none, and marks the ledger: a later run over everyone forgets batch 0.
    expect(await ledger.start("people.csv", "compared")).toEqual(new Map());
    expect(await ledger.start("people.csv", "all")).toEqual(new Map());
  });

  it("reads a run record that does not say how its batches were numbered as the ledger's unrecorded numbering", async () => {
    const legacy = JSON.stringify({ status: "running", file: "people.csv", startedAt: batch.at });
    const write = () => r.redis.hset(key(), "run", legacy, "batch:0", JSON.stringify(batch));
    await write();
    expect([...(await ledgerOf().start("people.csv", "all")).keys()]).toEqual([0]);
    await write();
    expect(await ledgerOf("compared").start("people.csv", "all")).toEqual(new Map());
    expect(await r.redis.hexists(key(), "batch:0")).toBe(0);
  });
});

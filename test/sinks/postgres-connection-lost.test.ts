import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RecruitSyncError } from "../../src/errors/index.ts";
import { PostgresSink } from "../../src/sinks/index.ts";
import { BEFORE_COMMIT, MID_COPY, type StallOptions, stallAt } from "../helpers/pg-stall.ts";
import { type TestSchema, withTestSchema } from "../helpers/postgres.ts";
import { WIDGETS, widget } from "./sink-contract.ts";

const rows = (tag: string, n: number) => Array.from({ length: n }, (_, i) => widget(`${tag}-${i}`));

describe.each([
  { where: "mid-COPY", stall: MID_COPY(1) },
  { where: "before its COMMIT", stall: BEFORE_COMMIT(2) },
] as { where: string; stall: StallOptions }[])("a PostgreSQL connection ended $where", ({ stall }) => {
  let schema: TestSchema;
  beforeEach(async () => {
    schema = await withTestSchema();
  });
  afterEach(async () => schema.cleanup());

  it("fails the commit with one line, keeps nothing of it, and the next commit goes through", async () => {
    const proxy = await stallAt(stall);
    const sink = new PostgresSink(proxy.through(schema.url));
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on("uncaughtException", onUnhandled);
    try {
      // The first transaction (prepare's) commits; the commit below is the one stalled.
      await sink.prepare([WIDGETS]);
      const commit = sink.commit({ runId: "r1", upsert: { table: "widgets", rows: rows("a", 2000) } });
      const failed = commit.then(
        () => undefined,
        (err: unknown) => err,
      );
      await proxy.stalled;
      expect(await proxy.terminate()).toBe(1);
      const err = await failed;
      expect(err).toBeInstanceOf(RecruitSyncError);
      const e = err as RecruitSyncError;

      expect(e.code).toBe("sink_connection_lost");
      expect(e.retryable).toBe(true);
      expect(e.message).not.toContain("\n");
      expect(e.message).toMatch(
        /^the PostgreSQL warehouse postgres:\/\/.* closed the connection during a commit/,
      );
      await sink.commit({ runId: "r2", upsert: { table: "widgets", rows: rows("b", 3) } });
      const kept = await sink.readTable("widgets");
      expect(kept.map((r) => r.widget_id)).toEqual(["b-0", "b-1", "b-2"]);
      // Give a late 'error' event the turn it would need to surface.
      await new Promise((r) => setTimeout(r, 200));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("uncaughtException", onUnhandled);
      await sink.close();
      await proxy.close();
    }
  });
});

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DuckDbSink, type TableSchema } from "../../src/sinks/index.ts";
import { run, WIDGETS, widget } from "./sink-contract.ts";

/** Widgets keeping a history of their status. */
const TRACKED: TableSchema = {
  ...WIDGETS,
  history: { table: "widgets_history", key: "widget_id", tracked: ["status"], asOf: "widgets_as_of" },
};

describe("DuckDB history catching up with its table", () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "recruit-sync-catch-up-"));
    path = join(dir, "w.duckdb");
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function open(historyCatchUpRows = 1000): Promise<DuckDbSink> {
    const sink = await DuckDbSink.open(path, { historyCatchUpRows });
    await sink.prepare([TRACKED]);
    return sink;
  }

  const write = (sink: DuckDbSink, runId: string, rows: Record<string, unknown>[], ended = false) =>
    sink.commit({
      runId,
      upsert: { table: "widgets", rows },
      run: run(runId, ended ? { status: "succeeded", finishedAt: new Date() } : {}),
    });
  const end = (sink: DuckDbSink, runId: string) =>
    sink.commit({ runId, run: run(runId, { status: "succeeded", finishedAt: new Date() }) });

  /** Each widget's versions as (status, from, to, current, opened by), oldest first. */
  async function versions(sink: DuckDbSink): Promise<Record<string, unknown[][]>> {
    const out: Record<string, unknown[][]> = {};
    for (const v of await sink.readTable("widgets_history")) {
      const id = String(v.widget_id);
      out[id] = [...(out[id] ?? []), [v.status, v.valid_from, v.valid_to, v.is_current, v.opened_by_run]];
    }
    for (const list of Object.values(out)) list.sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    return out;
  }

  async function syncedAt(sink: DuckDbSink): Promise<Record<string, unknown>> {
    return Object.fromEntries((await sink.readTable("widgets")).map((r) => [r.widget_id, r._synced_at]));
  }

  it("opens each version at the time of the commit that wrote its row, by that commit's run, once the run ends", async () => {
    const sink = await open();
    try {
      await write(sink, "r1", [widget("w1"), widget("w2")]);
      await write(sink, "r1", [widget("w3")]);
      await end(sink, "r1");
      const at = await syncedAt(sink);
      expect(at.w1).not.toBe(at.w3);
      expect(await versions(sink)).toEqual({
        w1: [["UNCLAIMED", at.w1, null, true, "r1"]],
        w2: [["UNCLAIMED", at.w2, null, true, "r1"]],
        w3: [["UNCLAIMED", at.w3, null, true, "r1"]],
      });
    } finally {
      await sink.close();
    }
  });

  it("catches up every so many rows while a run goes on", async () => {
    const sink = await open(3);
    try {
      await write(sink, "r1", [widget("w1"), widget("w2")]);
      await write(sink, "r1", [widget("w3"), widget("w4")]);
      expect(Object.keys(await versions(sink)).sort()).toEqual(["w1", "w2", "w3", "w4"]);
    } finally {
      await sink.close();
    }
  });

  it("keeps both versions when a commit changes a row the history has not caught up with yet", async () => {
    const sink = await open();
    try {
      await write(sink, "r1", [widget("w1", { status: "CLAIMED" })]);
      const first = (await syncedAt(sink)).w1;
      await write(sink, "r1", [widget("w1", { status: "SHIPPED" })]);
      await end(sink, "r1");
      const second = (await syncedAt(sink)).w1;
      expect(await versions(sink)).toEqual({
        w1: [
          ["CLAIMED", first, second, false, "r1"],
          ["SHIPPED", second, null, true, "r1"],
        ],
      });
    } finally {
      await sink.close();
    }
  });

  it("catches up, when the warehouse is opened again, with what a process that died had committed", async () => {
    const dying = await open();
    await write(dying, "r1", [widget("w1"), widget("w2")]);
    // The run never ends: like a kill after its commit, closing does not catch up.
    await dying.close();

    const sink = await open();
    try {
      const at = await syncedAt(sink);
      expect(await versions(sink)).toEqual({
        w1: [["UNCLAIMED", at.w1, null, true, "r1"]],
        w2: [["UNCLAIMED", at.w2, null, true, "r1"]],
      });
      await write(sink, "r2", [widget("w1"), widget("w2", { status: "CLAIMED" })], true);
      const later = await syncedAt(sink);
      expect(await versions(sink)).toEqual({
        w1: [["UNCLAIMED", at.w1, null, true, "r1"]],
        w2: [
          ["UNCLAIMED", at.w2, later.w2, false, "r1"],
          ["CLAIMED", later.w2, null, true, "r2"],
        ],
      });
    } finally {
      await sink.close();
    }
  });

  it("starts a history new to a table at its newest row: older rows get a version when next written", async () => {
    const plain = await DuckDbSink.open(path);
    await plain.prepare([WIDGETS]);
    await write(plain, "r1", [widget("w1")], true);
    await plain.close();

    const sink = await open();
    try {
      expect(await versions(sink)).toEqual({});
      await write(sink, "r2", [widget("w1")], true);
      const at = await syncedAt(sink);
      expect(await versions(sink)).toEqual({ w1: [["UNCLAIMED", at.w1, null, true, "r2"]] });
    } finally {
      await sink.close();
    }
  });
});

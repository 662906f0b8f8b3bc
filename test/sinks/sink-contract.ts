import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Sink, SyncRunRecord, TableSchema } from "../../src/sinks/index.ts";

/** A table exercising every column type. */
export const WIDGETS: TableSchema = {
  name: "widgets",
  columns: [
    { name: "widget_id", type: "text" },
    { name: "group_id", type: "text" },
    { name: "status", type: "text" },
    { name: "amount_cents", type: "bigint" },
    { name: "ratio", type: "double" },
    { name: "is_active", type: "boolean" },
    { name: "start_date", type: "date" },
    { name: "sent_at", type: "timestamp" },
    { name: "tags", type: "text_array" },
    { name: "note", type: "json" },
  ],
  primaryKey: ["widget_id"],
};

export function widget(id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const row: Record<string, unknown> = {
    widget_id: id,
    group_id: "g1",
    status: "UNCLAIMED",
    amount_cents: 1250,
    ratio: 0.5,
    is_active: true,
    start_date: "2026-03-01",
    sent_at: "2026-03-01T10:11:12.345Z",
    tags: ["a", 'quote"d', "tab\tand\\slash"],
    note: { note: "line\nbreak", createdByUserId: "u1" },
    ...over,
  };
  row._raw = { widgetId: id, ...over };
  return row;
}

export function run(runId: string, over: Partial<SyncRunRecord> = {}): SyncRunRecord {
  return {
    runId,
    resource: "widgets",
    startedAt: new Date("2026-03-01T00:00:00Z"),
    finishedAt: null,
    status: "running",
    pages: 0,
    rows: 0,
    requests: 0,
    error: null,
    ...over,
  };
}

export interface SinkFixture {
  /** Opens the sink (again) on the same storage. */
  open(): Promise<Sink>;
  cleanup(): Promise<void>;
}

/** What every sink promises, checked against a real database or directory. */
export function describeSinkContract(
  name: string,
  makeFixture: () => Promise<SinkFixture>,
  opts: { softDeletes: boolean },
): void {
  describe(`${name} sink contract`, () => {
    let fx: SinkFixture;
    let sink: Sink;
    beforeEach(async () => {
      fx = await makeFixture();
      sink = await fx.open();
      await sink.prepare([WIDGETS]);
    });
    afterEach(async () => {
      await sink.close();
      await fx.cleanup();
    });

    it("stores every column type and reads it back as plain values", async () => {
      await sink.commit({ runId: "r1", upsert: { table: "widgets", rows: [widget("w1")] } });
      const [row] = await sink.readTable("widgets");
      expect(row).toMatchObject({
        widget_id: "w1",
        amount_cents: 1250,
        ratio: 0.5,
        is_active: true,
        start_date: "2026-03-01",
        sent_at: "2026-03-01T10:11:12.345Z",
        tags: ["a", 'quote"d', "tab\tand\\slash"],
        note: { note: "line\nbreak", createdByUserId: "u1" },
        _raw: { widgetId: "w1" },
        _run_id: "r1",
        _deleted_at: null,
      });
      expect(typeof row?._synced_at).toBe("string");
    });

    it("stores nulls and empty arrays", async () => {
      await sink.commit({
        runId: "r1",
        upsert: {
          table: "widgets",
          rows: [widget("w1", { amount_cents: null, sent_at: undefined, tags: [], note: null, status: "" })],
        },
      });
      const [row] = await sink.readTable("widgets");
      expect(row).toMatchObject({ amount_cents: null, sent_at: null, tags: [], note: null, status: "" });
    });

    it("stores a timestamp with a UTC offset as its instant", async () => {
      await sink.commit({
        runId: "r1",
        upsert: { table: "widgets", rows: [widget("w1", { sent_at: "2026-03-01T12:00:00.250+02:00" })] },
      });
      const [row] = await sink.readTable("widgets");
      expect(row?.sent_at).toBe("2026-03-01T10:00:00.250Z");
    });

    it("stores a commit of more rows than one DuckDB chunk holds, each row with its own values", async () => {
      const rows = Array.from({ length: 5000 }, (_, i) =>
        widget(`w${String(i).padStart(5, "0")}`, { amount_cents: i, tags: [`t${i}`] }),
      );
      const res = await sink.commit({ runId: "r1", upsert: { table: "widgets", rows } });
      expect(res.upserted).toBe(5000);
      const back = await sink.readTable("widgets");
      expect(back).toHaveLength(5000);
      for (const i of [0, 2047, 2048, 4095, 4096, 4999]) {
        expect(back[i]).toMatchObject({
          widget_id: `w${String(i).padStart(5, "0")}`,
          amount_cents: i,
          tags: [`t${i}`],
        });
      }
    });

    it("upserts by primary key: a row loaded twice is one row with the newer values", async () => {
      await sink.commit({ runId: "r1", upsert: { table: "widgets", rows: [widget("w1"), widget("w2")] } });
      const res = await sink.commit({
        runId: "r2",
        upsert: { table: "widgets", rows: [widget("w2", { status: "CLAIMED" }), widget("w3")] },
      });
      expect(res.upserted).toBe(2);
      const rows = await sink.readTable("widgets");
      expect(rows.map((r) => [r.widget_id, r.status, r._run_id])).toEqual([
        ["w1", "UNCLAIMED", "r1"],
        ["w2", "CLAIMED", "r2"],
        ["w3", "UNCLAIMED", "r2"],
      ]);
    });

    it("keeps the last of two rows with one key in a single commit", async () => {
      await sink.commit({
        runId: "r1",
        upsert: { table: "widgets", rows: [widget("w1", { status: "A" }), widget("w1", { status: "B" })] },
      });
      expect((await sink.readTable("widgets")).map((r) => r.status)).toEqual(["B"]);
    });

    it("commits rows, state and the run record together and reads them after reopening", async () => {
      await sink.commit({
        runId: "r1",
        upsert: { table: "widgets", rows: [widget("w1")] },
        state: { stream: "widgets", value: { cursor: "c1", seen: ["r1"] } },
        run: run("r1", { pages: 1, rows: 1, requests: 1 }),
      });
      await sink.close();
      sink = await fx.open();
      await sink.prepare([WIDGETS]);
      expect(await sink.readState("widgets")).toEqual({ cursor: "c1", seen: ["r1"] });
      expect(await sink.readState("other")).toBeUndefined();
      expect(await sink.readTable("widgets")).toHaveLength(1);
      const runs = await sink.readRuns();
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({
        runId: "r1",
        resource: "widgets",
        status: "running",
        pages: 1,
        rows: 1,
      });
    });

    it("keeps an import run's kind, job, file, hash, counts and failure code", async () => {
      const extra = {
        kind: "import" as const,
        job: "crm",
        file: "/data/in/crm.csv",
        fileHash: "ab12",
        counts: { imported: 3, rejected: 1 },
        failureCode: "import_rejected_batch",
      };
      await sink.commit({
        runId: "i1",
        run: { ...run("i1"), resource: "import", status: "failed", ...extra },
      });
      await sink.commit({ runId: "r1", run: run("r1") });
      const runs = await sink.readRuns();
      expect(runs.find((r) => r.runId === "i1")).toMatchObject({ resource: "import", ...extra });
      expect(runs.find((r) => r.runId === "r1")?.kind ?? "export").toBe("export");
    });

    it("updates a run record in place and removes a state set to null", async () => {
      await sink.commit({ runId: "r1", run: run("r1"), state: { stream: "s", value: { a: 1 } } });
      await sink.commit({
        runId: "r1",
        run: run("r1", { status: "failed", finishedAt: new Date("2026-03-01T00:01:00Z"), error: "boom" }),
        state: { stream: "s", value: null },
      });
      const runs = await sink.readRuns();
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ status: "failed", error: "boom" });
      expect(runs[0]?.finishedAt?.toISOString()).toBe("2026-03-01T00:01:00.000Z");
      expect(await sink.readState("s")).toBeUndefined();
    });

    it("lists keys, leaving out rows whose other column is in a set", async () => {
      await sink.commit({
        runId: "r1",
        upsert: {
          table: "widgets",
          rows: [
            widget("w1", { status: "CLAIMED" }),
            widget("w2", { status: "UNCLAIMED" }),
            widget("w3", { status: null }),
          ],
        },
      });
      const keys = await sink.readKeys({
        table: "widgets",
        column: "widget_id",
        exclude: { column: "status", notIn: ["CLAIMED", "EXPIRED"] },
      });
      expect(keys).toEqual(["w2", "w3"]);
      expect(await sink.readKeys({ table: "widgets", column: "group_id" })).toEqual(["g1"]);
    });

    it("refuses rows for a table it was not prepared for", async () => {
      await expect(
        sink.commit({ runId: "r1", upsert: { table: "nope", rows: [widget("w1")] } }),
      ).rejects.toThrow(/not prepared/);
    });

    if (opts.softDeletes) {
      it("marks rows of the scope that the pass's runs did not write, and revives a row seen again", async () => {
        await sink.commit({
          runId: "r1",
          upsert: {
            table: "widgets",
            rows: [widget("w1"), widget("w2"), widget("w3", { group_id: "g2" })],
          },
        });
        await sink.commit({ runId: "r2", upsert: { table: "widgets", rows: [widget("w1")] } });
        const res = await sink.commit({
          runId: "r2",
          softDelete: { table: "widgets", scope: { group_id: "g1" }, keepRunIds: ["r2"] },
        });
        expect(res.deleted).toBe(1);
        let rows = await sink.readTable("widgets");
        expect(rows.map((r) => [r.widget_id, r._deleted_at === null])).toEqual([
          ["w1", true],
          ["w2", false],
          ["w3", true],
        ]);
        expect(await sink.readKeys({ table: "widgets", column: "widget_id", liveOnly: true })).toEqual([
          "w1",
          "w3",
        ]);
        await sink.commit({ runId: "r3", upsert: { table: "widgets", rows: [widget("w2")] } });
        rows = await sink.readTable("widgets");
        expect(rows.find((r) => r.widget_id === "w2")?._deleted_at).toBeNull();
      });

      it("rolls back the whole commit when one part fails", async () => {
        await sink.commit({ runId: "r1", state: { stream: "s", value: { n: 1 } } });
        await expect(
          sink.commit({
            runId: "r2",
            upsert: { table: "widgets", rows: [widget("w1"), widget("w2", { sent_at: "not a time" })] },
            state: { stream: "s", value: { n: 2 } },
          }),
        ).rejects.toThrow(/sent_at/);
        expect(await sink.readTable("widgets")).toEqual([]);
        expect(await sink.readState("s")).toEqual({ n: 1 });
        await sink.commit({ runId: "r3", upsert: { table: "widgets", rows: [widget("w3")] } });
        expect((await sink.readTable("widgets")).map((r) => r.widget_id)).toEqual(["w3"]);
      });

      it("migrates forward: a new column is added, none is dropped, data stays", async () => {
        await sink.commit({ runId: "r1", upsert: { table: "widgets", rows: [widget("w1")] } });
        await sink.close();
        sink = await fx.open();
        const grown: TableSchema = {
          ...WIDGETS,
          columns: [
            ...WIDGETS.columns.filter((c) => c.name !== "ratio"),
            { name: "extra_flag", type: "boolean" },
          ],
        };
        await sink.prepare([grown]);
        await sink.commit({
          runId: "r2",
          upsert: { table: "widgets", rows: [widget("w2", { extra_flag: true })] },
        });
        const rows = await sink.readTable("widgets");
        expect(rows[0]).toMatchObject({ widget_id: "w1", ratio: 0.5, extra_flag: null });
        expect(rows[1]).toMatchObject({ widget_id: "w2", ratio: null, extra_flag: true });
      });
    }
  });
}

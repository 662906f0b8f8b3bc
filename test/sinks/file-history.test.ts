import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSink, type Sink, type TableSchema } from "../../src/sinks/index.ts";
import { WIDGETS, widget } from "./sink-contract.ts";

/** Widgets whose status, amount and send time are tracked; their history is widgets_history. */
const TRACKED: TableSchema = {
  ...WIDGETS,
  history: {
    table: "widgets_history",
    key: "widget_id",
    tracked: ["status", "amount_cents", "sent_at"],
    asOf: "w_as_of",
  },
};

async function history(url: string): Promise<Record<string, unknown>[]> {
  const sink = await createSink(url);
  try {
    await sink.prepare([TRACKED]);
    return await sink.readTable("widgets_history");
  } finally {
    await sink.close();
  }
}

describe("a file warehouse's history within one sink", () => {
  let dir: string;
  let url: string;
  let sink: Sink;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "recruit-sync-file-history-"));
    url = `file:${dir}`;
    sink = await createSink(url);
    await sink.prepare([TRACKED]);
  });
  afterEach(async () => {
    await sink.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("closes, with the values it opened with, a version this sink opened earlier", async () => {
    const upsert = (runId: string, rows: Record<string, unknown>[]) =>
      sink.commit({ runId, upsert: { table: "widgets", rows } });
    await upsert("r1", [widget("w1"), widget("w2", { status: "CLAIMED" }), widget("w3")]);
    await upsert("r2", [
      widget("w1", { status: "CLAIMED" }),
      widget("w2", { status: "CLAIMED", note: { n: 2 } }),
    ]);
    await upsert("r3", [widget("w3", { amount_cents: 99 }), widget("w1", { status: "PAID", sent_at: null })]);

    const rows = await history(url);
    const of = (id: string) =>
      rows
        .filter((r) => r.widget_id === id)
        .map((r) => [
          r.status,
          Number(r.amount_cents),
          r.sent_at === null ? null : "sent",
          r.is_current,
          r.opened_by_run,
          r.closed_by_run,
        ]);
    expect(of("w1")).toEqual([
      ["UNCLAIMED", 1250, "sent", false, "r1", "r2"],
      ["CLAIMED", 1250, "sent", false, "r2", "r3"],
      ["PAID", 1250, null, true, "r3", null],
    ]);
    // An untracked column's change opens nothing.
    expect(of("w2")).toEqual([["CLAIMED", 1250, "sent", true, "r1", null]]);
    expect(of("w3")).toEqual([
      ["UNCLAIMED", 1250, "sent", false, "r1", "r3"],
      ["UNCLAIMED", 99, "sent", true, "r3", null],
    ]);
  });

  it.each([
    ["a tracked column, from the history's own map", { status: "UNCLAIMED" }],
    ["an untracked column, from the table's parts", { group_id: "g1" }],
  ])("closes what a full refresh found gone, its scope on %s", async (_how, scope) => {
    const rows = [
      widget("w1"),
      widget("w2"),
      widget("w3"),
      widget("w4", { status: "CLAIMED", group_id: "g2" }),
    ];
    await sink.commit({ runId: "r1", upsert: { table: "widgets", rows } });
    // A refresh in a new sink: r2 writes w1 in one commit and w3 with its soft delete in another.
    await sink.close();
    sink = await createSink(url);
    await sink.prepare([TRACKED]);
    await sink.commit({ runId: "r2", upsert: { table: "widgets", rows: [widget("w1")] } });
    await sink.commit({
      runId: "r2",
      upsert: { table: "widgets", rows: [widget("w3")] },
      softDelete: { table: "widgets", scope, keepRunIds: ["r2"] },
    });
    const current = (await history(url)).map((r) => [r.widget_id, r.is_current, r.closed_by_run]);
    // w2 is gone; w4 is outside the scope either way.
    expect(current).toEqual([
      ["w1", true, null],
      ["w2", false, "r2"],
      ["w3", true, null],
      ["w4", true, null],
    ]);
  });

  it("fails the commit, rather than close the wrong row, when a history part was rewritten under it", async () => {
    const rows1 = [widget("w1"), widget("w2"), widget("w3")];
    await sink.commit({ runId: "r1", upsert: { table: "widgets", rows: rows1 } });
    // What forget does to a part naming a person: the line goes, the lines after it move up (w3 to w2's).
    const partDir = join(dir, "widgets_history");
    const [part] = (await readdir(partDir, { recursive: true })).filter((f) => f.endsWith(".ndjson"));
    const file = join(partDir, part as string);
    const lines = (await readFile(file, "utf8")).split("\n").filter(Boolean);
    await writeFile(file, `${lines.filter((l) => !l.includes('"w1"')).join("\n")}\n`);

    await expect(
      sink.commit({ runId: "r2", upsert: { table: "widgets", rows: [widget("w2", { status: "PAID" })] } }),
    ).rejects.toThrow(/no longer at line 2 of .*run the export again/);
    // A new sink reads the parts afresh and closes the right version.
    const fresh = await createSink(url);
    try {
      await fresh.prepare([TRACKED]);
      await fresh.commit({
        runId: "r2",
        upsert: { table: "widgets", rows: [widget("w2", { status: "PAID" })] },
      });
    } finally {
      await fresh.close();
    }
    const rows = await history(url);
    expect(rows.map((r) => [r.widget_id, r.status, r.is_current])).toEqual([
      ["w2", "UNCLAIMED", false],
      ["w2", "PAID", true],
      ["w3", "UNCLAIMED", true],
    ]);
  });
});

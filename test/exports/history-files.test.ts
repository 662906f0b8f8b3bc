import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportTableSchemas } from "../../src/exports/index.ts";
import { fileHistoryQuery } from "../../src/exports/warehouse-examples.ts";
import { createSink } from "../../src/sinks/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import type { TestWarehouse } from "./export-fixture.ts";
import { editParticipants, expectWellFormed, exportOnce } from "./history-fixture.ts";

describe("participant history in a file warehouse", () => {
  let emu: TestEmulator;
  let dir: string;
  let warehouse: TestWarehouse;
  let moved: string;
  let removed: string;

  const history = async () => {
    const sink = await createSink(warehouse.url);
    try {
      await sink.prepare(exportTableSchemas({ history: true }));
      return await sink.readTable("participants_history");
    } finally {
      await sink.close();
    }
  };

  beforeAll(async () => {
    emu = await startTestEmulator({ sizes: { participantsPerStudy: 6, properties: 8 } });
    dir = await mkdtemp(join(tmpdir(), "history-files-"));
    const url = `file:${dir}`;
    warehouse = {
      url,
      open: () => createSink(url),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
    const snap = (await (await emu.admin("/snapshot")).json()) as {
      participants: { participantId: string; studyId: string }[];
    };
    const ids = snap.participants.filter((p) => p.studyId === "study_1").map((p) => p.participantId);
    moved = ids[0] as string;
    removed = ids[1] as string;
  });
  afterAll(async () => {
    await emu?.close();
    await warehouse?.cleanup();
  });

  it("appends a version per change, closes what left, and adds nothing when run again", async () => {
    await exportOnce(emu, warehouse);
    for (const status of ["SCREENER_SENT", "APPROVED"]) {
      await editParticipants(emu, (ps) => ps.map((p) => (p.participantId === moved ? { ...p, status } : p)));
      await exportOnce(emu, warehouse);
    }
    await editParticipants(emu, (ps) => ps.filter((p) => p.participantId !== removed));
    await exportOnce(emu, warehouse);
    const rows = await history();
    expectWellFormed(rows, "participant_id");
    const versions = rows.filter((r) => r.participant_id === moved);
    expect(versions.map((v) => [v.status, v.is_current])).toEqual([
      [versions[0]?.status, false],
      ["SCREENER_SENT", false],
      ["APPROVED", true],
    ]);
    expect(versions[0]?.valid_to).toBe(versions[1]?.valid_from);
    expect(rows.filter((r) => r.participant_id === removed).map((r) => r.is_current)).toEqual([false]);
    expect(rows.filter((r) => r.is_current)).toHaveLength(5);

    const parts = async () => (await readdir(join(dir, "participants_history"), { recursive: true })).length;
    const before = await parts();
    await exportOnce(emu, warehouse);
    expect(await parts()).toBe(before);
    expect(await history()).toEqual(rows);
    // The query docs/warehouse.md gives reads the same versions back.
    const instance = await DuckDBInstance.create(":memory:");
    const conn = await instance.connect();
    const read = (await conn.runAndReadAll(`${fileHistoryQuery(dir)} ORDER BY participant_id, valid_from`))
      .getRowObjectsJS()
      .map((r) => [r.participant_id, r.status, r.is_current]);
    conn.closeSync();
    instance.closeSync();
    expect(read).toEqual(rows.map((r) => [r.participant_id, r.status, r.is_current]));
    // The parts carry no contact details.
    const manifest = await readFile(join(dir, "_manifest.ndjson"), "utf8");
    const part = /"historyPart":\{[^}]*"ndjson":"([^"]+)"/.exec(manifest)?.[1] as string;
    expect(await readFile(join(dir, part), "utf8")).not.toMatch(/@/);
  });
});

import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExportJobDefinitionInput } from "../../src/config/export-job.ts";
import { EXPORT_TABLES } from "../../src/exports/index.ts";
import { dictionaryTables, warehouseDictionary } from "../../src/exports/warehouse-dictionary.ts";
import { EXAMPLE_QUERIES } from "../../src/exports/warehouse-examples.ts";
import { allColumns } from "../../src/sinks/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type SinkKind, type TestWarehouse, testWarehouse } from "./export-fixture.ts";
import { editParticipants, exportOnce, queryWarehouse } from "./history-fixture.ts";

const committed = readFileSync(new URL("../../docs/warehouse.md", import.meta.url), "utf8");

describe("docs/warehouse.md", () => {
  it("is what `npm run docs:warehouse` writes from the table schemas (run it when this fails)", () => {
    expect(committed).toBe(warehouseDictionary());
  });

  it("gives every exported column a meaning, from the column's own definition", () => {
    for (const t of Object.values(EXPORT_TABLES)) {
      for (const c of allColumns(t.table)) expect(c.description, `${t.table.name}.${c.name}`).toBeTruthy();
    }
  });

  it("shows ten example queries", () => {
    expect(EXAMPLE_QUERIES).toHaveLength(10);
    for (const q of EXAMPLE_QUERIES) expect(committed).toContain(q.sql);
  });
});

const JOB: Omit<ExportJobDefinitionInput, "kind"> = {
  studies: ["study_1", "study_5"],
  propertyGroups: ["property_group_1"],
  incentives: { ids: Array.from({ length: 20 }, (_, i) => `incentive_${i + 1}`) },
  emails: { backfillDays: 90 },
  pageSize: 10,
  history: true,
};

describe.each(["duckdb", "postgres"] as SinkKind[])("the warehouse the dictionary describes (%s)", (kind) => {
  let emu: TestEmulator;
  let warehouse: TestWarehouse;

  beforeAll(async () => {
    emu = await startTestEmulator({ sizes: { participantsPerStudy: 12, emailMessages: 80 } });
    warehouse = await testWarehouse(kind);
    await exportOnce(emu, warehouse, JOB);
    // Moves and a departure, so the history views have something to show.
    let gone = "";
    await editParticipants(emu, (ps) => {
      gone = ps.find((p) => p.studyId === "study_1")?.participantId ?? "";
      return ps
        .filter((p) => p.participantId !== gone)
        .map((p, i) => (p.studyId === "study_5" && i % 2 === 0 ? { ...p, status: "APPROVED" } : p));
    });
    await exportOnce(emu, warehouse, JOB);
  });
  afterAll(async () => {
    await emu?.close();
    await warehouse?.cleanup();
  });

  it("holds exactly the tables, views and columns the dictionary lists", async () => {
    const sql =
      kind === "postgres"
        ? "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
        : "SELECT table_name, column_name FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'main'";
    const found = new Map<string, Set<string>>();
    for (const r of await queryWarehouse(kind, warehouse.url, sql)) {
      const name = String(r.table_name);
      found.set(name, (found.get(name) ?? new Set()).add(String(r.column_name)));
    }
    const listed = new Map(dictionaryTables().map((t) => [t.name, new Set(t.columns)]));
    expect([...found.keys()].sort()).toEqual([...listed.keys()].sort());
    for (const [name, columns] of listed)
      expect([...(found.get(name) ?? [])].sort(), name).toEqual([...columns].sort());
  });

  it.each(EXAMPLE_QUERIES.map((q, i) => ({ ...q, n: i + 1 })))("runs example $n, $title", async (q) => {
    const rows = await queryWarehouse(kind, warehouse.url, q.sql);
    // Those that look back at a time before the first export have nothing to show yet.
    const empty = ["Approved then, not approved a week later", "Every participant's state at a given time"];
    if (!empty.includes(q.title)) expect(rows.length, q.title).toBeGreaterThan(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type TestWarehouse, testWarehouse } from "./export-fixture.ts";
import { expectWellFormed, exportOnce, historyRows, queryWarehouse } from "./history-fixture.ts";

/**
 * PostgreSQL's version hash changed (md5 of the row's text, then
 * hash_record_extended): a warehouse whose versions were hashed the old way
 * must not get a new version for every unchanged entity at its next export.
 */
describe("a PostgreSQL history hashed another way", () => {
  let emu: TestEmulator;
  let warehouse: TestWarehouse;

  beforeAll(async () => {
    emu = await startTestEmulator({ sizes: { participantsPerStudy: 9, properties: 8 } });
    warehouse = await testWarehouse("postgres");
  });
  afterAll(async () => {
    await emu?.close();
    await warehouse?.cleanup();
  });

  it("is rehashed once when the sink opens it, so an export of the same state adds no version", async () => {
    await exportOnce(emu, warehouse);
    const participants = await historyRows(
      "postgres",
      warehouse.url,
      "participants_history",
      "participant_id",
    );
    const properties = await historyRows(
      "postgres",
      warehouse.url,
      "person_properties_history",
      "property_id",
    );
    expect(participants.length).toBeGreaterThan(0);
    expect(properties.length).toBeGreaterThan(0);
    // As a warehouse written before the change: other hashes (md5-shaped), no note of the way.
    for (const table of ["participants_history", "person_properties_history"]) {
      await queryWarehouse("postgres", warehouse.url, `UPDATE ${table} SET row_hash = md5(row_hash)`);
    }
    await queryWarehouse(
      "postgres",
      warehouse.url,
      "DELETE FROM sync_state WHERE stream LIKE 'history-hash:%'",
    );

    await exportOnce(emu, warehouse);
    const after = await historyRows("postgres", warehouse.url, "participants_history", "participant_id");
    expectWellFormed(after, "participant_id");
    expect(after).toEqual(participants);
    expect(await historyRows("postgres", warehouse.url, "person_properties_history", "property_id")).toEqual(
      properties,
    );
    const notes = await queryWarehouse(
      "postgres",
      warehouse.url,
      "SELECT stream, value FROM sync_state WHERE stream LIKE 'history-hash:%' ORDER BY stream",
    );
    expect(notes).toEqual([
      { stream: "history-hash:participants_history", value: { hash: "hash_record_extended" } },
      { stream: "history-hash:person_properties_history", value: { hash: "hash_record_extended" } },
    ]);
  });
});

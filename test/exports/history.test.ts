import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type SinkKind, type TestWarehouse, testWarehouse } from "./export-fixture.ts";
import {
  at,
  editParticipants,
  expectWellFormed,
  exportOnce,
  historyRows,
  queryWarehouse,
} from "./history-fixture.ts";

const STATUSES = ["SCREENER_SENT", "APPROVED", "COMPLETED"];

describe.each(["duckdb", "postgres"] as SinkKind[])("participant history (%s)", (kind) => {
  let emu: TestEmulator;
  let warehouse: TestWarehouse;
  /** The time after each export, and each participant's status the service held then. */
  const exports: { time: Date; statuses: Map<string, string | undefined> }[] = [];
  let moved: string;
  let removed: string;

  const serviceStatuses = async () => {
    const snap = (await (await emu.admin("/snapshot")).json()) as {
      participants: { participantId: string; studyId: string; status?: string }[];
    };
    return new Map(
      snap.participants.filter((p) => p.studyId === "study_1").map((p) => [p.participantId, p.status]),
    );
  };
  const exportAndRemember = async () => {
    const statuses = await serviceStatuses();
    exports.push({ time: await exportOnce(emu, warehouse), statuses });
  };

  beforeAll(async () => {
    emu = await startTestEmulator({ sizes: { participantsPerStudy: 9, properties: 8 } });
    warehouse = await testWarehouse(kind);
    const first = [...(await serviceStatuses()).keys()].sort();
    moved = first[0] as string;
    removed = first[1] as string;
    await exportAndRemember();
    // Three changes of one participant's status across four exports.
    for (const status of STATUSES) {
      await editParticipants(emu, (ps) => ps.map((p) => (p.participantId === moved ? { ...p, status } : p)));
      await exportAndRemember();
    }
  });
  afterAll(async () => {
    await emu?.close();
    await warehouse?.cleanup();
  });

  it("leaves three closed versions and one open for a participant whose status changed three times", async () => {
    const rows = await historyRows(kind, warehouse.url, "participants_history", "participant_id");
    expectWellFormed(rows, "participant_id");
    const versions = rows.filter((r) => r.participant_id === moved);
    expect(versions.map((v) => v.status)).toEqual([exports[0]?.statuses.get(moved), ...STATUSES]);
    expect(versions.map((v) => v.is_current)).toEqual([false, false, false, true]);
    for (let i = 0; i < 3; i++) expect(versions[i]?.valid_to).toBe(versions[i + 1]?.valid_from);
    // The others never changed: one version each.
    const others = rows.filter((r) => r.participant_id !== moved);
    expect(others.length).toBe(8);
    expect(others.every((r) => r.is_current)).toBe(true);
  });

  it("answers an as-of query at each export's time with that export's state", async () => {
    for (const e of exports) {
      const rows = await queryWarehouse(
        kind,
        warehouse.url,
        `SELECT participant_id, status FROM participants_as_of(TIMESTAMP '${at(e.time)}') ORDER BY participant_id`,
      );
      expect(new Map(rows.map((r) => [r.participant_id, r.status ?? undefined]))).toEqual(e.statuses);
    }
  });

  it("adds no version when the same export runs again, nor for a change of an untracked field", async () => {
    const before = await historyRows(kind, warehouse.url, "participants_history", "participant_id");
    const properties = await historyRows(kind, warehouse.url, "person_properties_history", "property_id");
    await exportOnce(emu, warehouse);
    expect(await historyRows(kind, warehouse.url, "participants_history", "participant_id")).toEqual(before);
    // The note is kept in participants only: changing it opens no version.
    await editParticipants(emu, (ps) =>
      ps.map((p) =>
        p.participantId === moved ? { ...p, note: { note: "call back", createdByUserId: "user_1" } } : p,
      ),
    );
    await exportOnce(emu, warehouse);
    const [row] = await queryWarehouse(
      kind,
      warehouse.url,
      `SELECT note FROM participants WHERE participant_id = '${moved}'`,
    );
    expect(JSON.stringify(row?.note)).toContain("call back");
    expect(await historyRows(kind, warehouse.url, "participants_history", "participant_id")).toEqual(before);
    expect(await historyRows(kind, warehouse.url, "person_properties_history", "property_id")).toEqual(
      properties,
    );
  });

  it("closes the version of a participant removed in the service with the time of the export that noticed", async () => {
    await editParticipants(emu, (ps) => ps.filter((p) => p.participantId !== removed));
    const time = await exportOnce(emu, warehouse);
    const rows = await historyRows(kind, warehouse.url, "participants_history", "participant_id");
    expectWellFormed(rows, "participant_id");
    const versions = rows.filter((r) => r.participant_id === removed);
    expect(versions).toHaveLength(1);
    expect(versions[0]?.is_current).toBe(false);
    const [run] = await queryWarehouse(
      kind,
      warehouse.url,
      "SELECT finished_at FROM sync_runs WHERE resource = 'participants' ORDER BY started_at DESC LIMIT 1",
    );
    // Closed inside the export that noticed: after it started, no later than it finished.
    expect(String(versions[0]?.valid_to) <= time.toISOString()).toBe(true);
    expect(String(versions[0]?.valid_to) <= String(run?.finished_at)).toBe(true);
    expect(String(versions[0]?.valid_to) > String(exports.at(-1)?.time.toISOString())).toBe(true);
    const asOf = await queryWarehouse(
      kind,
      warehouse.url,
      `SELECT participant_id FROM participants_as_of(TIMESTAMP '${at(time)}') WHERE participant_id = '${removed}'`,
    );
    expect(asOf).toEqual([]);
    const changes = await queryWarehouse(
      kind,
      warehouse.url,
      `SELECT change, from_status, to_status FROM participant_status_changes WHERE participant_id = '${removed}' ORDER BY changed_at`,
    );
    expect(changes.map((c) => c.change)).toEqual(["entered", "removed"]);
    expect(changes[1]?.to_status).toBeNull();
  });

  it("lists each status change once and counts them per study, status and day", async () => {
    const changes = await queryWarehouse(
      kind,
      warehouse.url,
      `SELECT change, from_status, to_status FROM participant_status_changes WHERE participant_id = '${moved}' ORDER BY changed_at`,
    );
    const first = exports[0]?.statuses.get(moved) ?? null;
    expect(changes).toEqual([
      { change: "entered", from_status: null, to_status: first },
      { change: "changed", from_status: first, to_status: STATUSES[0] },
      { change: "changed", from_status: STATUSES[0], to_status: STATUSES[1] },
      { change: "changed", from_status: STATUSES[1], to_status: STATUSES[2] },
    ]);
    const funnel = await queryWarehouse(
      kind,
      warehouse.url,
      "SELECT status, sum(participants) AS participants FROM study_funnel WHERE study_id = 'study_1' AND status = 'COMPLETED' GROUP BY status",
    );
    expect(Number(funnel[0]?.participants)).toBeGreaterThanOrEqual(1);
  });

  it("keeps person properties' versions keyed by their id", async () => {
    const rows = await historyRows(kind, warehouse.url, "person_properties_history", "property_id");
    expectWellFormed(rows, "property_id");
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.is_current)).toBe(true);
  });
});

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Snapshot } from "../../src/emulator/index.ts";
import { runExport } from "../../src/exports/index.ts";
import { createSink } from "../../src/sinks/index.ts";
import { startTestEmulator } from "../helpers/emulator.ts";
import { definition, type ExportFixture, exportFixture } from "./export-fixture.ts";

const DAY = 86_400_000;

async function putSnapshot(fx: ExportFixture, snap: Snapshot): Promise<void> {
  const res = await fx.emu.admin("/snapshot", { method: "PUT", body: snap });
  if (!res.ok) throw new Error(`PUT /snapshot answered ${res.status}: ${await res.text()}`);
}

async function setClock(fx: ExportFixture, now: string): Promise<void> {
  const res = await fx.emu.admin("/clock", { body: { now } });
  if (!res.ok) throw new Error(`POST /clock answered ${res.status}`);
}

function ids(rows: Record<string, unknown>[], column: string): string[] {
  return rows.map((r) => String(r[column])).sort();
}

describe("participants stream", () => {
  let fx: ExportFixture;
  beforeEach(async () => {
    fx = await exportFixture("duckdb", { sizes: { participantsPerStudy: 47 } });
  });
  afterEach(async () => fx.cleanup());

  it("pages through every participant of each configured study", async () => {
    const report = await fx.run({
      resources: ["participants"],
      studies: ["study_1", "study_5"],
      pageSize: 10,
    });
    const snap = await fx.emu.snapshot();
    const expected = snap.participants.filter((p) => p.studyId === "study_1" || p.studyId === "study_5");
    expect(expected.length).toBe(94);
    expect(report.status).toBe("succeeded");
    expect(report.resources.participants).toMatchObject({ rows: 94, pages: 10, requests: 10, deleted: 0 });
    const rows = await fx.sink.readTable("participants");
    expect(ids(rows, "participant_id")).toEqual(expected.map((p) => p.participantId).sort());
    const one = expected[0]!;
    const row = rows.find((r) => r.participant_id === one.participantId)!;
    expect(row).toMatchObject({
      person_id: one.personId,
      study_id: one.studyId,
      email: one.email ?? null,
      additional_emails: one.additionalEmails ?? [],
      status: one.status ?? null,
      _raw: { participantId: one.participantId },
      _deleted_at: null,
    });
  });

  it("goes on with the other studies when one is gone, and then fails naming it", async () => {
    const report = await fx.run({
      resources: ["participants"],
      studies: ["study_1", "study_gone", "study_5"],
      pageSize: 50,
    });
    expect(report.resources.participants?.status).toBe("failed");
    expect(report.resources.participants?.error).toContain("Study not found");
    const rows = await fx.sink.readTable("participants");
    expect(new Set(rows.map((r) => r.study_id))).toEqual(new Set(["study_1", "study_5"]));
    expect(rows).toHaveLength(94);
  });

  it("loads nothing and succeeds for a study without participants", async () => {
    const res = await fx.emu.admin("/studies", { body: { studyId: "study_empty" } });
    expect(res.status).toBe(201);
    const report = await fx.run({ resources: ["participants"], studies: ["study_empty"] });
    expect(report.status).toBe("succeeded");
    expect(report.resources.participants).toMatchObject({ rows: 0, pages: 1, requests: 1 });
    expect(await fx.sink.readTable("participants")).toEqual([]);
  });

  it("marks a participant gone from its study deleted, leaves other studies alone, and revives one that returns", async () => {
    const def = { resources: ["participants" as const], studies: ["study_1"], pageSize: 10 };
    await fx.run({ ...def, studies: ["study_1", "study_2"] });
    const full = await fx.emu.snapshot();
    const gone = full.participants.filter((p) => p.studyId === "study_1").slice(3, 5);
    const goneIds = new Set(gone.map((p) => p.participantId));
    await putSnapshot(fx, {
      ...full,
      participants: full.participants.filter((p) => !goneIds.has(p.participantId)),
    });

    const report = await fx.run(def);
    expect(report.resources.participants).toMatchObject({ rows: 45, deleted: 2 });
    let rows = await fx.sink.readTable("participants");
    const deleted = rows.filter((r) => r._deleted_at !== null);
    expect(ids(deleted, "participant_id")).toEqual([...goneIds].sort());
    // study_2 was not part of this run: its rows keep their state.
    expect(rows.filter((r) => r.study_id === "study_2" && r._deleted_at !== null)).toEqual([]);

    await putSnapshot(fx, full);
    await fx.run(def);
    rows = await fx.sink.readTable("participants");
    expect(rows.filter((r) => r._deleted_at !== null)).toEqual([]);
  });
});

describe("email messages stream", () => {
  let fx: ExportFixture;
  beforeEach(async () => {
    fx = await exportFixture("duckdb", { sizes: { emailMessages: 400 } });
  });
  afterEach(async () => fx.cleanup());

  it("backfills the configured days on the first run, over many pages", async () => {
    const now = await fx.serviceNow();
    const report = await fx.run({
      resources: ["email_messages"],
      emails: { backfillDays: 30 },
      pageSize: 25,
    });
    const snap = await fx.emu.snapshot();
    const from = now.getTime() - 30 * DAY;
    const expected = snap.emailMessages.filter((m) => m.sentAt && Date.parse(m.sentAt) >= from);
    expect(expected.length).toBeGreaterThan(100);
    expect(report.resources.email_messages).toMatchObject({
      rows: expected.length,
      pages: Math.ceil(expected.length / 25),
    });
    const rows = await fx.sink.readTable("email_messages");
    expect(ids(rows, "id")).toEqual(expected.map((m) => m.id).sort());
    const newest = expected
      .map((m) => m.sentAt as string)
      .sort()
      .at(-1);
    expect(await fx.sink.readState("email_messages")).toEqual({ highWater: newest });
  });

  it("reads only the window since the newest sentAt, reaching back the lookback for late records", async () => {
    const def = { resources: ["email_messages" as const], emails: { backfillDays: 30, lookbackHours: 24 } };
    await fx.run(def);
    const snap = await fx.emu.snapshot();
    const first = await fx.sink.readTable("email_messages");
    const template = snap.emailMessages[0]!;
    const now = await fx.serviceNow();
    const at = (msAgo: number) => new Date(now.getTime() - msAgo).toISOString();
    // Three days on: one new message, one that arrived late but within the lookback, one too late.
    await setClock(fx, new Date(now.getTime() + 3 * DAY).toISOString());
    const highWater = Date.parse(
      ((await fx.sink.readState("email_messages")) as { highWater: string }).highWater,
    );
    const added = [
      { ...template, id: "email_new", sentAt: at(-2 * DAY) },
      { ...template, id: "email_late", sentAt: new Date(highWater - 10 * 3_600_000).toISOString() },
      { ...template, id: "email_too_late", sentAt: new Date(highWater - 5 * DAY).toISOString() },
    ];
    await putSnapshot(fx, { ...snap, emailMessages: [...snap.emailMessages, ...added] });

    const report = await fx.run(def);
    const rows = await fx.sink.readTable("email_messages");
    const loaded = new Set(rows.map((r) => r.id));
    expect(loaded.has("email_new")).toBe(true);
    expect(loaded.has("email_late")).toBe(true);
    expect(loaded.has("email_too_late")).toBe(false);
    // The second run asked for a few days, not the whole backfill again.
    expect(report.resources.email_messages!.rows).toBeLessThan(first.length / 3);
    expect(await fx.sink.readState("email_messages")).toEqual({ highWater: added[0]!.sentAt });
  });

  it("restricts the search to a study and keeps a separate cursor for it", async () => {
    const report = await fx.run({
      resources: ["email_messages"],
      emails: { backfillDays: 90, studyId: "study_1" },
    });
    const rows = await fx.sink.readTable("email_messages");
    expect(rows.length).toBe(report.resources.email_messages!.rows);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.study_id))).toEqual(new Set(["study_1"]));
    expect(await fx.sink.readState("email_messages:studyId=study_1")).toMatchObject({
      highWater: expect.any(String),
    });
    expect(await fx.sink.readState("email_messages")).toBeUndefined();
  });

  it("loads nothing when no message was sent in the window", async () => {
    const snap = await fx.emu.snapshot();
    await putSnapshot(fx, { ...snap, emailMessages: [] });
    const report = await fx.run({ resources: ["email_messages"] });
    expect(report.resources.email_messages).toMatchObject({ rows: 0, pages: 1, status: "succeeded" });
    expect(await fx.sink.readState("email_messages")).toEqual({ highWater: null });
  });
});

describe("incentives streams", () => {
  let fx: ExportFixture;
  let dir: string;
  beforeEach(async () => {
    fx = await exportFixture("duckdb");
    dir = await mkdtemp(join(tmpdir(), "recruit-sync-ids-"));
  });
  afterEach(async () => {
    await fx.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it("reads ids from the list and a CSV file, then re-reads only those not yet final", async () => {
    const file = join(dir, "ids.csv");
    await writeFile(file, "note,incentiveId\nx,incentive_3\ny,incentive_7\nz,incentive_404\n");
    const def = {
      resources: ["incentives" as const, "custom_incentives" as const],
      incentives: { ids: ["incentive_1", "incentive_2", "incentive_4"], idsFile: file },
      pageSize: 2,
    };
    const first = await fx.run(def);
    expect(first.resources.incentives).toMatchObject({ rows: 5, requests: 6, missing: 1, pages: 3 });
    const rows = await fx.sink.readTable("incentives");
    expect(rows.map((r) => [r.incentive_id, r.status])).toEqual([
      ["incentive_1", "UNCLAIMED"],
      ["incentive_2", "UNCLAIMED"],
      ["incentive_3", "CLAIMED"],
      ["incentive_4", "CANCELED"],
      ["incentive_7", "SENT"],
    ]);
    expect(rows[0]).toMatchObject({ amount_cents: expect.any(Number), sent_at: "2026-03-15T10:00:00.000Z" });
    // incentive_7 is custom: its definition comes along.
    const custom = await fx.sink.readTable("custom_incentives");
    expect(ids(custom, "custom_incentive_id")).toEqual(["custom_incentive_3"]);
    expect(first.resources.custom_incentives).toMatchObject({ rows: 1, requests: 1 });

    await fx.emu.admin("/requests/reset", { method: "POST" });
    const second = await fx.run(def);
    // Only the two UNCLAIMED ones and the unknown id are asked for again.
    expect(second.resources.incentives).toMatchObject({ rows: 2, requests: 3, missing: 1 });
    const counts = await fx.emu.requests();
    expect(Object.values(counts.byRoute.getIncentive ?? {}).reduce((a, b) => a + b, 0)).toBe(3);
  });

  it("re-reads incentives already in the warehouse and sees them expire when the clock passes a year", async () => {
    await fx.run({
      resources: ["incentives"],
      incentives: { ids: ["incentive_1", "incentive_9", "incentive_10"] },
    });
    // No ids configured now: the warehouse is the source.
    const def = { resources: ["incentives" as const], incentives: { ids: [], fromWarehouse: true } };
    let report = await fx.run(def);
    expect(report.resources.incentives).toMatchObject({ rows: 3, requests: 3 });

    await setClock(fx, "2027-03-16T00:00:00.000Z");
    report = await fx.run(def);
    expect(report.resources.incentives).toMatchObject({ rows: 3 });
    const rows = await fx.sink.readTable("incentives");
    expect(rows.map((r) => [r.incentive_id, r.status])).toEqual([
      ["incentive_1", "EXPIRED"],
      ["incentive_10", "EXPIRED"],
      // Sent before 2026-02-01: the expiry rule does not apply.
      ["incentive_9", "UNCLAIMED"],
    ]);
    report = await fx.run(def);
    expect(report.resources.incentives).toMatchObject({ rows: 1, requests: 1 });
  });

  it("reads nothing when there is no id at all", async () => {
    const report = await fx.run({ resources: ["incentives", "custom_incentives"] });
    expect(report.status).toBe("succeeded");
    expect(report.resources.incentives).toMatchObject({ rows: 0, requests: 0, pages: 0 });
    expect(report.resources.custom_incentives).toMatchObject({ rows: 0, requests: 0 });
  });
});

describe("segments and person properties streams", () => {
  let fx: ExportFixture;
  beforeEach(async () => {
    fx = await exportFixture("duckdb", { sizes: { segments: 53 } });
  });
  afterEach(async () => fx.cleanup());

  it("refreshes every segment and marks the removed ones", async () => {
    const report = await fx.run({ resources: ["segments"], pageSize: 10 });
    expect(report.resources.segments).toMatchObject({ rows: 53, pages: 6 });
    const snap = await fx.emu.snapshot();
    await putSnapshot(fx, { ...snap, segments: snap.segments.slice(1) });
    const again = await fx.run({ resources: ["segments"], pageSize: 10 });
    expect(again.resources.segments).toMatchObject({ rows: 52, deleted: 1 });
    const rows = await fx.sink.readTable("segments");
    expect(rows.filter((r) => r._deleted_at !== null).map((r) => r.segment_id)).toEqual([
      snap.segments[0]!.segmentId,
    ]);
  });

  it("loads the properties of each configured group with the group's id", async () => {
    const snap = await fx.emu.snapshot();
    const groups = ["property_group_1", "property_group_2"];
    const report = await fx.run({ resources: ["person_properties"], propertyGroups: groups, pageSize: 2 });
    const expected = snap.personProperties.filter((p) => groups.includes(p.propertyGroupId ?? ""));
    expect(report.resources.person_properties!.rows).toBe(expected.length);
    const rows = await fx.sink.readTable("person_properties");
    expect(ids(rows, "property_id")).toEqual(expected.map((p) => p.propertyId).sort());
    const typed = rows.find((r) => r.property_type === "SINGLE_SELECT");
    expect(typed).toMatchObject({ is_unique: expect.any(Boolean), property_options: expect.any(Array) });
  });

  it("records each resource of a run in sync_runs", async () => {
    const report = await fx.run({
      resources: ["segments", "person_properties"],
      propertyGroups: ["property_group_1"],
    });
    const runs = await fx.sink.readRuns();
    expect(runs.map((r) => [r.runId, r.resource, r.status])).toEqual([
      [report.runId, "segments", "succeeded"],
      [report.runId, "person_properties", "succeeded"],
    ]);
    expect(runs[0]).toMatchObject({ rows: 53, pages: 1, requests: 1, error: null });
    expect(runs[0]?.finishedAt).toBeInstanceOf(Date);
  });
});

describe("exports into a file warehouse", () => {
  let dir: string;
  let emu: Awaited<ReturnType<typeof startTestEmulator>>;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "recruit-sync-lake-"));
    emu = await startTestEmulator();
  });
  afterEach(async () => {
    await emu.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("writes each stream's parts and reads incentive ids back from them on the next run", async () => {
    const sink = await createSink(`file:${dir}`);
    try {
      const run = (input: Parameters<typeof definition>[0]) =>
        runExport({ definition: definition(input), client: emu.client, sink });
      const first = await run({
        resources: ["participants", "incentives"],
        studies: ["study_1"],
        incentives: { ids: ["incentive_1", "incentive_3"] },
      });
      expect(first.status).toBe("succeeded");
      expect(ids(await sink.readTable("participants"), "participant_id")).toHaveLength(25);
      const second = await run({ resources: ["incentives"], incentives: { ids: [], fromWarehouse: true } });
      // incentive_3 is CLAIMED, final: only incentive_1 is read again.
      expect(second.resources.incentives).toMatchObject({ rows: 1, requests: 1 });
    } finally {
      await sink.close();
    }
  });
});

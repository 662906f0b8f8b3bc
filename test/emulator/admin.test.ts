import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe("admin API", () => {
  it("snapshots every collection, with people in the documented shape", async () => {
    emu = await startTestEmulator({ sizes: { people: 12 } });
    const snap = await emu.snapshot();
    for (const key of [
      "studies",
      "people",
      "populations",
      "participants",
      "personProperties",
      "propertyGroups",
      "incentives",
      "customIncentives",
      "emailMessages",
      "segments",
      "teams",
      "users",
      "questionTemplates",
    ]) {
      expect(Array.isArray((snap as Record<string, unknown>)[key]), key).toBe(true);
    }
    expect(Object.keys(snap.people[0] ?? {}).sort()).toEqual(
      [
        "personId",
        "email",
        "phone",
        "firstName",
        "lastName",
        "isOptedOut",
        "contactStatus",
        "lastContactDate",
        "additionalEmails",
        "additionalPhones",
        "properties",
        "populationIds",
      ].sort(),
    );
    // Every study type and status, native and other screeners, every incentive type and status.
    expect(new Set(snap.studies.map((s) => s.studyType))).toEqual(
      new Set(["SURVEY", "INTERVIEWS", "UNMODERATED_TEST", "GROUP_INTERVIEW"]),
    );
    expect(new Set(snap.studies.map((s) => s.status))).toEqual(
      new Set(["DRAFT", "ACTIVE", "PAUSED", "CLOSED"]),
    );
    expect(new Set(snap.studies.map((s) => s.screener?.type ?? "none")).size).toBe(6);
    expect(new Set(snap.incentives.map((i) => i.status))).toEqual(
      new Set(["UNCLAIMED", "CLAIMED", "CANCELED", "ERROR", "SENT", "EXPIRED"]),
    );
    expect(new Set(snap.incentives.map((i) => i.type))).toEqual(
      new Set(["MONEY_OR_GIFT_CARD", "CUSTOM", "RECRUITMENT_FEE", "RESPONDENT_MONEY", null]),
    );
    expect(snap.personProperties.some((p) => p.isUnique)).toBe(true);
    expect(snap.personProperties.some((p) => !p.isUnique)).toBe(true);
  });

  it("is deterministic: the same seed gives the same store, another seed another", async () => {
    const a = await startTestEmulator({ seed: 7, clock: "2026-06-01T00:00:00.000Z" });
    const b = await startTestEmulator({ seed: 7, clock: "2026-06-01T00:00:00.000Z" });
    const c = await startTestEmulator({ seed: 8, clock: "2026-06-01T00:00:00.000Z" });
    try {
      const [sa, sb, sc] = await Promise.all([a.snapshot(), b.snapshot(), c.snapshot()]);
      const stable = (s: typeof sa) =>
        JSON.stringify({ ...s, emailMessages: s.emailMessages.map((m) => m.id) });
      expect(stable(sa)).toBe(stable(sb));
      expect(stable(sa)).not.toBe(stable(sc));
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it("loads a snapshot with PUT and resets to the seeded state with POST /reset", async () => {
    emu = await startTestEmulator({ sizes: { people: 8 } });
    const snap = await emu.snapshot();
    const people = snap.people.slice(0, 2);
    const changed = {
      ...snap,
      people,
      // A participant needs its person in the snapshot.
      participants: snap.participants.filter((p) => people.some((q) => q.personId === p.personId)),
      segments: [{ segmentId: "segment_x", name: "Only" }],
    };
    const put = await emu.admin("/snapshot", { method: "PUT", body: changed });
    expect(put.status).toBe(200);
    expect((await emu.client.searchSegments()).results).toEqual([{ segmentId: "segment_x", name: "Only" }]);
    expect((await emu.snapshot()).people).toHaveLength(2);
    await emu.client.updateOptedOut("person_1", true);
    expect((await emu.admin("/reset", { body: {} })).status).toBe(200);
    const again = await emu.snapshot();
    expect(again.people).toHaveLength(8);
    expect(again.people[0]?.isOptedOut).toBe(snap.people[0]?.isOptedOut);
    const bad = await emu.admin("/snapshot", { method: "PUT", body: { people: [{ personId: 1 }] } });
    expect(bad.status).toBe(400);
  });

  it("counts requests by route and status, and resets the counts", async () => {
    emu = await startTestEmulator();
    await raw(emu, "GET", "/incentives/incentive_1");
    await raw(emu, "GET", "/incentives/missing");
    await raw(emu, "GET", "/incentives/incentive_1", { token: null });
    const counts = await emu.requests();
    expect(counts.byRoute.getIncentive).toEqual({ "200": 1, "404": 1, "401": 1 });
    expect(counts.total).toBe(3);
    await emu.admin("/requests", { method: "DELETE" });
    expect((await emu.requests()).total).toBe(0);
    await raw(emu, "GET", "/incentives/incentive_1");
    await emu.admin("/requests/reset", { body: {} });
    expect((await emu.requests()).total).toBe(0);
  });

  it("reseeds with other sizes and creates studies and people for tests", async () => {
    emu = await startTestEmulator();
    const seeded = await emu.admin("/seed", { body: { seed: 3, sizes: { people: 50, studies: 14 } } });
    expect(await seeded.json()).toMatchObject({ people: 50, studies: 14 });
    const created = await emu.admin("/studies", {
      body: { studyType: "INTERVIEWS", status: "DRAFT", screener: "NATIVE" },
    });
    expect(created.status).toBe(201);
    const study = (await created.json()) as { studyId: string };
    expect(study.studyId).toBe("study_15");
    expect((await emu.client.getScreener("study_15")).type).toBe("NATIVE");
    const people = await emu.admin("/people", {
      body: { people: [{ email: "made@example.org", firstName: "Made" }] },
    });
    const made = (await people.json()) as { people: { personId: string }[] };
    expect(made.people[0]?.personId).toBe("person_51");
    expect((await emu.client.updateOptedOut("made@example.org", true)).personId).toBe("person_51");
  });

  it("looks people up by id or email and lists its own endpoints", async () => {
    emu = await startTestEmulator({ sizes: { people: 5 } });
    const byId = (await (await emu.admin("/people/person_2")).json()) as { people: { email: string }[] };
    expect(byId.people).toHaveLength(1);
    const email = byId.people[0]?.email as string;
    const byEmail = (await (await emu.admin(`/people/${encodeURIComponent(email)}`)).json()) as {
      people: { personId: string }[];
    };
    expect(byEmail.people.map((p) => p.personId)).toEqual(["person_2"]);
    expect((await emu.admin("/people/person_99")).status).toBe(404);
    const index = (await (await emu.admin("")).json()) as { endpoints: string[] };
    expect(index.endpoints).toContain("GET /__emulator/snapshot");
  });

  it("looks a person up by an additional email too, primary holders first", async () => {
    emu = await startTestEmulator({ sizes: { people: 3 } });
    await emu.admin("/people", {
      body: {
        people: [
          { personId: "person_60", email: "home@example.org", additionalEmails: ["Work@Example.org"] },
          { personId: "person_61", email: "work@example.org" },
        ],
      },
    });
    const res = await emu.admin(`/people/${encodeURIComponent("work@example.org")}`);
    expect(res.status).toBe(200);
    const found = (await res.json()) as { people: { personId: string }[] };
    expect(found.people.map((p) => p.personId)).toEqual(["person_61", "person_60"]);
  });

  it("sets and advances the clock", async () => {
    emu = await startTestEmulator();
    const set = await (await emu.admin("/clock", { body: { now: "2030-01-01T00:00:00.000Z" } })).json();
    expect((set as { now: string }).now.slice(0, 10)).toBe("2030-01-01");
    const moved = await (await emu.admin("/clock", { body: { advanceDays: 2 } })).json();
    expect((moved as { now: string }).now.slice(0, 10)).toBe("2030-01-03");
    expect((await emu.client.updateOptedOut("person_1", true)).updatedAt.slice(0, 10)).toBe("2030-01-03");
  });

  it("is not served when disabled", async () => {
    emu = await startTestEmulator({ admin: false });
    expect((await emu.admin("/snapshot")).status).toBe(404);
  });

  it("saves the store to the state file on close and restores it on the next start", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "emulator-state-"));
    const file = path.join(dir, "state.jsonl");
    try {
      const first = await startTestEmulator({ stateFile: file, sizes: { people: 15 } });
      await first.client.importParticipants("study_2", { people: [{ email: "kept@example.org" }] });
      await first.client.updateOptedOut("person_4", true);
      const before = await first.snapshot();
      await first.close();
      const second = await startTestEmulator({ stateFile: file });
      try {
        expect(second.emulator.restoredFromState).toBe(true);
        const after = await second.snapshot();
        expect(after.people).toEqual(before.people);
        expect(after.participants).toEqual(before.participants);
        expect(after.studies).toEqual(before.studies);
        // Counters continue after the restored ids.
        await second.client.importParticipants("study_2", { people: [{ email: "next@example.org" }] });
        expect((await second.snapshot()).people.find((p) => p.email === "next@example.org")?.personId).toBe(
          "person_17",
        );
      } finally {
        await second.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

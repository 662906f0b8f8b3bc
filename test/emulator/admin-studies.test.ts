import { afterEach, describe, expect, it } from "vitest";
import type { Snapshot } from "../../src/emulator/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const ofStudy = <T extends { studyId?: string | null | undefined }>(records: T[], studyId: string) =>
  records.filter((r) => r.studyId === studyId);

/** A seeded study that has participants, email messages and incentives. */
function studyWithEverything(snap: Snapshot): string {
  const found = snap.studies.find(
    ({ studyId }) =>
      ofStudy(snap.participants, studyId).length > 0 &&
      ofStudy(snap.emailMessages, studyId).length > 0 &&
      ofStudy(snap.incentives, studyId).length > 0,
  );
  if (!found) throw new Error("no seeded study has participants, email messages and incentives");
  return found.studyId;
}

describe("POST /__emulator/studies with the id of a study the store holds", () => {
  it("replaces the study and drops its screener, participants, email messages, incentives and imports, and nothing else", async () => {
    emu = await startTestEmulator({ sizes: { people: 40 } });
    const studyId = studyWithEverything(await emu.snapshot());
    // A rehearsal already ran against it: an import record names it too.
    await emu.client.importParticipants(studyId, { people: [{ email: "rehearsed@example.org" }] });
    const before = await emu.snapshot();
    const incentiveId = ofStudy(before.incentives, studyId)[0]?.incentiveId as string;

    const res = await emu.admin("/studies", { body: { studyId, status: "DRAFT", screener: "none" } });
    expect(res.status).toBe(201);

    const after = await emu.snapshot();
    const left = {
      participants: ofStudy(after.participants, studyId),
      emailMessages: ofStudy(after.emailMessages, studyId),
      incentives: ofStudy(after.incentives, studyId),
      imports: ofStudy(after.imports, studyId),
    };
    expect(left).toEqual({ participants: [], emailMessages: [], incentives: [], imports: [] });
    const others = <T extends { studyId?: string | null | undefined }>(records: T[]) =>
      records.filter((r) => r.studyId !== studyId);
    expect(after).toEqual({
      ...before,
      studies: before.studies.map((s) => (s.studyId === studyId ? expect.anything() : s)),
      participants: others(before.participants),
      emailMessages: others(before.emailMessages),
      incentives: others(before.incentives),
      imports: others(before.imports),
    });
    expect(after.studies.find((s) => s.studyId === studyId)).toMatchObject({
      status: "DRAFT",
      screener: null,
    });

    // Through the service: the study's messages and incentives are gone, its people are not.
    expect((await emu.client.searchEmails({ studyId })).total).toBe(0);
    const incentive = await raw(emu, "GET", `/incentives/${incentiveId}`);
    expect([incentive.status, incentive.text]).toEqual([404, "Incentive not found"]);
    expect(after.people.some((p) => p.email === "rehearsed@example.org")).toBe(true);
  });
});

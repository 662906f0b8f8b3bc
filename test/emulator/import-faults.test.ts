import { afterEach, describe, expect, it } from "vitest";
import { emulatorOptionsFromFlags } from "../../src/cli/commands/emulator-flags.ts";
import { dropsPerson } from "../../src/emulator/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const SEED = 7;
const emails = Array.from({ length: 400 }, (_, i) => `drop-${i}@example.test`);
const people = emails.map((email) => ({ email }));

async function studyId(e: TestEmulator): Promise<string> {
  const res = await e.admin("/studies", { body: { name: "faults" } });
  return ((await res.json()) as { studyId: string }).studyId;
}

async function participantEmails(e: TestEmulator, study: string): Promise<Set<string>> {
  const snap = await e.snapshot();
  const byId = new Map(snap.people.map((p) => [p.personId, p.email]));
  const found = new Set<string>();
  for (const p of snap.participants ?? []) if (p.studyId === study) found.add(byId.get(p.personId) ?? "");
  return found;
}

describe("import faults", () => {
  it("silently drops the people the seed names, still answering the full count, and lists them", async () => {
    emu = await startTestEmulator({
      seed: SEED,
      faults: [{ route: "importParticipants", dropPeopleRate: 0.1 }],
    });
    const study = await studyId(emu);
    const expected = emails.filter((e) => dropsPerson(SEED, 0.1, e));
    expect(expected.length).toBeGreaterThan(10);
    expect(expected.length).toBeLessThan(80);

    const first = await emu.client.importParticipants(study, { people: people.slice(0, 150) });
    const second = await emu.client.importParticipants(study, { people: people.slice(150) });
    expect([first.count, second.count]).toEqual([150, 250]);

    const landed = await participantEmails(emu, study);
    expect(emails.filter((e) => !landed.has(e))).toEqual(expected);
    const dropped = (await (await emu.admin("/faults/dropped")).json()) as {
      people: { importId: string; key: string; studyId: string }[];
    };
    expect(dropped.people.map((p) => p.key)).toEqual(expected);
    expect(new Set(dropped.people.map((p) => p.importId))).toEqual(
      new Set([first.importId, second.importId]),
    );

    // The same people are dropped however the file is cut into requests.
    await emu.admin("/reset", { method: "POST" });
    const again = await studyId(emu);
    await emu.admin("/faults", { body: { route: "importParticipants", dropPeopleRate: 0.1 } });
    for (let i = 0; i < people.length; i += 37)
      await emu.client.importParticipants(again, { people: people.slice(i, i + 37) });
    const landedAgain = await participantEmails(emu, again);
    expect(emails.filter((e) => !landedAgain.has(e))).toEqual(expected);
  });

  it("answers a count that does not match the people received, set through the admin API", async () => {
    emu = await startTestEmulator();
    const study = await studyId(emu);
    const set = await emu.admin("/faults", {
      body: { route: "importParticipants", countOffset: -2, count: 1 },
    });
    expect(set.status).toBe(200);
    const off = await emu.client.importParticipants(study, { people: people.slice(0, 10) });
    expect(off.count).toBe(8);
    expect(off.message).toContain("8 people");
    // Every person was stored: only the answer lies.
    expect((await participantEmails(emu, study)).size).toBe(10);
    // The rule had a count of 1: the next answer is honest.
    expect((await emu.client.importParticipants(study, { people: people.slice(10, 15) })).count).toBe(5);
  });

  it("refuses a count offset that is not a whole number", async () => {
    emu = await startTestEmulator();
    const res = await emu.admin("/faults", { body: { route: "importParticipants", countOffset: 1.5 } });
    expect(res.status).toBe(400);
  });

  it("takes both faults from the command line as one rule on imports", () => {
    const options = emulatorOptionsFromFlags(
      { ...baseFlags(), dropPeopleRate: "0.01", countOffset: "-1" },
      {},
    );
    expect(options.faults).toEqual([{ route: "importParticipants", dropPeopleRate: 0.01, countOffset: -1 }]);
    expect(() => emulatorOptionsFromFlags({ ...baseFlags(), dropPeopleRate: "2" }, {})).toThrow(
      /--drop-people-rate must be a number between 0 and 1/,
    );
    expect(() => emulatorOptionsFromFlags({ ...baseFlags(), countOffset: "0" }, {})).toThrow(
      /--count-offset must be a whole number other than 0/,
    );
  });
});

function baseFlags() {
  return {
    host: "127.0.0.1",
    port: "0",
    seed: "1",
    rateLimit: "off",
    resetUnit: "delta-seconds",
    token: [],
    admin: true,
    fault: [],
  };
}

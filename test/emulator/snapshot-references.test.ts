import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Snapshot } from "../../src/emulator/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function putSnapshot(e: TestEmulator, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await e.admin("/snapshot", { method: "PUT", body });
  return { status: res.status, json: await res.json() };
}

/** Imports `n` people new to the workspace into study_2 and answers them as the store holds them. */
async function importNewPeople(e: TestEmulator, n: number, tag: string): Promise<Snapshot["people"]> {
  const emails = Array.from({ length: n }, (_, i) => `${tag}.${i + 1}@example.org`);
  await e.client.importParticipants("study_2", { people: emails.map((email) => ({ email })) });
  const people = (await e.snapshot()).people;
  return emails.map((email) => {
    const person = people.find((p) => p.email === email);
    if (!person) throw new Error(`the import did not create ${email}`);
    return person;
  });
}

/** Imports one new person per name, each with a value of a new STRING property of that name. */
async function importWithNewProperties(
  e: TestEmulator,
  names: string[],
): Promise<Snapshot["personProperties"]> {
  for (const name of names) {
    await e.client.importParticipants("study_2", {
      people: [
        {
          email: `${name.toLowerCase()}@example.org`,
          properties: [{ name, propertyType: "STRING", value: "x" }],
        },
      ],
    });
  }
  return (await e.snapshot()).personProperties.filter((p) => names.includes(p.name));
}

describe("PUT /__emulator/snapshot: the records a snapshot's records name", () => {
  it("refuses a participant whose person or study is not in the snapshot, naming each, and keeps the store", async () => {
    emu = await startTestEmulator({ sizes: { people: 8, participantsPerStudy: 3 } });
    const before = await emu.snapshot();
    // What a hand-trimmed snapshot looks like: a person and a study left out, their participants kept.
    const trimmed: Snapshot = {
      ...before,
      people: before.people.filter((p) => p.personId !== "person_3"),
      studies: before.studies.filter((s) => s.studyId !== "study_9"),
    };
    const expected = trimmed.participants.flatMap((p, i) => [
      ...(p.personId === "person_3"
        ? [{ message: expect.stringContaining("person_3"), path: ["participants", i, "personId"] }]
        : []),
      ...(p.studyId === "study_9"
        ? [{ message: expect.stringContaining("study_9"), path: ["participants", i, "studyId"] }]
        : []),
    ]);
    expect(expected.length).toBeGreaterThanOrEqual(2);

    const put = await putSnapshot(emu, trimmed);
    expect(put.status).toBe(400);
    expect((put.json as { errors: unknown[] }).errors).toEqual(expected);
    const first = trimmed.participants.findIndex((p) => p.personId === "person_3");
    expect((put.json as { errors: { message: string }[] }).errors[0]?.message).toBe(
      `participant ${trimmed.participants[first]?.participantId} is of person person_3, who is not in the snapshot: add the person or leave the participant out`,
    );
    expect(await emu.snapshot()).toEqual(before);
  });

  it("names the first 20 participants without their person and counts the rest", async () => {
    emu = await startTestEmulator({ sizes: { people: 8, participantsPerStudy: 3 } });
    const before = await emu.snapshot();
    const put = await putSnapshot(emu, { ...before, people: [] });
    expect(put.status).toBe(400);
    const errors = (put.json as { errors: { message: string; path: unknown[] }[] }).errors;
    expect(errors.slice(0, 20).map((e) => e.path)).toEqual(
      Array.from({ length: 20 }, (_, i) => ["participants", i, "personId"]),
    );
    expect(errors.slice(20)).toEqual([
      {
        message: `and ${before.participants.length - 20} more participants whose person or study is not in the snapshot`,
        path: ["participants"],
      },
    ]);
  });

  it("refuses a person twice in one study, naming the later participant, and keeps the store", async () => {
    emu = await startTestEmulator({ sizes: { people: 8, participantsPerStudy: 3 } });
    const before = await emu.snapshot();
    const first = before.participants[1] as Snapshot["participants"][number];
    // A merge of two exports of one study: the same person under another participant id.
    const participants = [...before.participants, { ...first, participantId: "participant_900" }];

    const put = await putSnapshot(emu, { ...before, participants });
    expect(put.status).toBe(400);
    expect((put.json as { errors: unknown[] }).errors).toEqual([
      {
        message: `participant participant_900 is person ${first.personId} in study ${first.studyId} again (first as participant ${first.participantId}, at participants[1]): a person is a participant of a study once; leave one out`,
        path: ["participants", participants.length - 1, "personId"],
      },
    ]);
    expect(await emu.snapshot()).toEqual(before);
  });

  it("never gives a new person or participant an id that an email message or incentive still names", async () => {
    emu = await startTestEmulator({ sizes: { people: 4, participantsPerStudy: 2, emailMessages: 0 } });
    const seeded = await emu.snapshot();
    // Recipients since deleted: their messages and incentives stay (spec 2.9), the people do not.
    const message = {
      id: "email_1",
      recipientId: "person_6",
      senderId: "user_1",
      status: "DELIVERED",
      type: "INVITATION",
      sentAt: "2026-03-01T10:00:00.000Z",
      scheduledSendTime: "2026-03-01T10:00:00.000Z",
      createdAt: "2026-03-01T09:00:00.000Z",
      studyId: "study_1",
      participantId: "participant_27",
      messageCampaignId: "campaign_1",
      recipientEmail: "gone@example.org",
      senderEmail: "researcher1@research.example.com",
      subject: "Join our study",
    };
    const incentive = {
      ...seeded.incentives[0],
      incentiveId: "incentive_1",
      personId: "person_8",
      participantId: "participant_29",
    };
    const put = await putSnapshot(emu, {
      ...seeded,
      emailMessages: [message],
      incentives: [incentive, ...seeded.incentives.slice(1)],
    });
    expect(put.status).toBe(200);

    const newcomers = await importNewPeople(emu, 6, "newcomer");
    const ids = newcomers.map((p) => p.personId);
    expect(ids).not.toContain("person_6");
    expect(ids).not.toContain("person_8");
    const joined = (await emu.snapshot()).participants.filter((p) => ids.includes(p.personId));
    expect(joined.map((p) => p.participantId)).not.toContain("participant_27");
    expect(joined.map((p) => p.participantId)).not.toContain("participant_29");
    // Through the service: no newcomer is the recipient of the deleted person's message.
    const byPerson = await emu.client.searchEmails({
      filter: {
        operator: "OR",
        filters: newcomers.map((p) => ({
          person: { propertyType: "STRING", propertyName: "EMAIL", operator: "IS", value: p.email ?? "" },
        })),
      },
    });
    expect(byPerson.results).toEqual([]);
  });

  it("never gives a property an import creates the id that a person's value still names", async () => {
    emu = await startTestEmulator({ sizes: { people: 10, properties: 8 } });
    const seeded = await emu.snapshot();
    // property_5 (Job title) and those after it are gone from the list; person_5's value still names it.
    // No screener maps it here, so only the value can keep its id.
    const values = seeded.people.find((p) => p.personId === "person_5")?.properties;
    expect(values).toContainEqual({ propertyId: "property_5", value: expect.any(String) });
    const put = await putSnapshot(emu, {
      ...seeded,
      personProperties: seeded.personProperties.slice(0, 4),
      studies: seeded.studies.map((s) => ({ ...s, screener: null })),
    });
    expect(put.status).toBe(200);

    const created = await importWithNewProperties(emu, ["Team", "Role"]);
    expect(created.map((p) => p.propertyId)).not.toContain("property_5");
    const person5 = (await emu.snapshot()).people.find((p) => p.personId === "person_5");
    expect(person5?.properties).toEqual(values);
  });

  it("never gives a property an import creates the id that a screener question still maps", async () => {
    emu = await startTestEmulator({ sizes: { people: 10, properties: 8 } });
    const seeded = await emu.snapshot();
    // property_5 is gone from the list and from every person; study_1's question still maps it.
    const put = await putSnapshot(emu, {
      ...seeded,
      personProperties: seeded.personProperties.slice(0, 4),
      people: seeded.people.map((p) => ({
        ...p,
        properties: p.properties.filter((v) => v.propertyId !== "property_5"),
      })),
    });
    expect(put.status).toBe(200);

    const created = await importWithNewProperties(emu, ["Team", "Role"]);
    expect(created.map((p) => p.propertyId)).not.toContain("property_5");
    // Neither is held back from deletion as mapped by a screener question.
    const ids = created.map((p) => p.propertyId);
    expect(await emu.client.deleteProperties(ids)).toEqual({ deleted: ids, errors: [] });
  });

  it("gives distinct ids to new people after loading an id whose number is beyond exact integers", async () => {
    emu = await startTestEmulator({ sizes: { people: 2 } });
    const seeded = await emu.snapshot();
    const [first, second] = seeded.people;
    // A 19-digit id, as systems that make ids from a clock and a machine number do.
    const big = { ...first, personId: "person_1541815603606036480" } as Snapshot["people"][number];
    const put = await putSnapshot(emu, {
      ...seeded,
      people: [big, second],
      participants: seeded.participants.filter((p) => p.personId === second?.personId),
    });
    expect(put.status).toBe(200);

    const newcomers = await importNewPeople(emu, 3, "exact");
    expect(new Set(newcomers.map((p) => p.personId)).size).toBe(3);
    expect((await emu.snapshot()).people).toHaveLength(5);
  });
});

describe("POST /__emulator/people: the ids a person's values name", () => {
  it("never gives a property an import creates the id of one a created person's value names", async () => {
    emu = await startTestEmulator({ sizes: { people: 2, properties: 8 } });
    const res = await emu.admin("/people", {
      body: {
        people: [{ email: "valued@example.org", properties: [{ propertyId: "property_9", value: "x" }] }],
      },
    });
    expect(res.status).toBe(201);
    const created = await importWithNewProperties(emu, ["Team"]);
    expect(created.map((p) => p.propertyId)).not.toContain("property_9");
  });
});

describe("the --state file: the records its records name", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** A state file an emulator of 6 people (3 participants a study) saved, and its lines. */
  async function savedState(): Promise<{ file: string; lines: string[] }> {
    dir = await mkdtemp(path.join(tmpdir(), "emulator-state-"));
    const file = path.join(dir, "state.jsonl");
    const first = await startTestEmulator({ stateFile: file, sizes: { people: 6, participantsPerStudy: 3 } });
    await first.close();
    return { file, lines: (await readFile(file, "utf8")).split("\n") };
  }

  /** What starting from `file` gave: the error it was refused with, or "started" (an emulator that starts anyway is closed, not left listening). */
  function startFrom(file: string): Promise<unknown> {
    return startTestEmulator({ stateFile: file }).then(
      async (e) => {
        await e.close();
        return "started";
      },
      (err: unknown) => err,
    );
  }

  it("refuses to start from a file whose participant's person is not in it, naming the line", async () => {
    const { file, lines } = await savedState();
    const personLine = lines.findIndex((l) => l.startsWith('{"person":{"personId":"person_2"'));
    expect(personLine).toBeGreaterThan(0);
    lines.splice(personLine, 1);
    await writeFile(file, lines.join("\n"));
    const participantLine =
      lines.findIndex((l) => l.startsWith('{"participant":') && l.includes('"personId":"person_2"')) + 1;

    const outcome = await startFrom(file);
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(
      new RegExp(
        `line ${participantLine}: participant participant_\\d+ is of person person_2, who is not in the file`,
      ),
    );
  });

  it("refuses to start from a file with a person twice in one study, naming the line", async () => {
    const { file, lines } = await savedState();
    const original = lines.find((l) => l.startsWith('{"participant":'));
    if (original === undefined) throw new Error("the saved file has no participant line");
    const { participant } = JSON.parse(original) as { participant: Snapshot["participants"][number] };
    // Before the final empty string the trailing newline leaves.
    lines.splice(
      lines.length - 1,
      0,
      JSON.stringify({ participant: { ...participant, participantId: "participant_900" } }),
    );
    await writeFile(file, lines.join("\n"));
    const duplicateLine = lines.length - 1;

    const outcome = await startFrom(file);
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toContain(
      `line ${duplicateLine}: participant participant_900 is person ${participant.personId} in study ${participant.studyId} again (first as participant ${participant.participantId}): a person is a participant of a study once; leave one out`,
    );
  });
});

import { afterEach, describe, expect, it } from "vitest";
import type { PersonRecord } from "../../src/emulator/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function personByEmail(e: TestEmulator, email: string): Promise<PersonRecord[]> {
  const snap = await e.snapshot();
  return snap.people.filter((p) => p.email?.toLowerCase() === email.toLowerCase());
}

describe("POST /studies/{studyId}/participants/import", () => {
  it("creates new people, makes each a participant once, and answers message, count and importId", async () => {
    emu = await startTestEmulator({ sizes: { people: 30 } });
    const body = {
      people: [
        { email: "new.one@example.org", firstName: "New", lastName: "One", phone: "+1 555 0100" },
        { email: "new.two@example.org", isOptedOut: true, lastContactDate: "2026-05-01" },
      ],
    };
    const res = await emu.client.importParticipants("study_2", body);
    expect(res).toEqual({ message: expect.any(String), count: 2, importId: expect.any(String) });
    await emu.client.importParticipants("study_2", body);
    const snap = await emu.snapshot();
    expect(snap.people).toHaveLength(32);
    const two = snap.people.find((p) => p.email === "new.two@example.org");
    expect(two).toMatchObject({
      isOptedOut: true,
      contactStatus: "OPTED_OUT",
      lastContactDate: "2026-05-01",
    });
    const inStudy = snap.participants.filter((p) => p.studyId === "study_2");
    expect(inStudy.filter((p) => p.email === "new.one@example.org")).toHaveLength(1);
    expect(inStudy.filter((p) => p.email === "new.two@example.org")).toHaveLength(1);
    const page = await emu.client.searchParticipants("study_2", { size: 100 });
    expect(page.results.some((p) => p.email === "new.one@example.org" && p.phone === "+1 555 0100")).toBe(
      true,
    );
  });

  it("matches an existing person by email (any case), updates what is supplied and keeps the rest", async () => {
    emu = await startTestEmulator({ sizes: { people: 30 } });
    const snap = await emu.snapshot();
    const p = snap.people[4] as PersonRecord;
    await emu.client.importParticipants("study_2", {
      people: [
        { email: (p.email as string).toUpperCase(), lastName: "Changed", additionalPhones: ["+15551112222"] },
      ],
    });
    const [after, ...rest] = await personByEmail(emu, p.email as string);
    expect(rest).toHaveLength(0);
    expect(after).toMatchObject({
      personId: p.personId,
      firstName: p.firstName,
      lastName: "Changed",
      phone: p.phone,
      additionalPhones: ["+15551112222"],
    });
  });

  it("shows a participant's updated contact fields in the next participants search", async () => {
    emu = await startTestEmulator({ sizes: { people: 10 } });
    const before = (await emu.client.searchParticipants("study_1", { size: 1 })).results[0];
    expect(before?.phone).toEqual(expect.any(String));
    await emu.client.importParticipants("study_1", {
      identifier: "phone",
      people: [
        {
          phone: before?.phone as string,
          email: "changed@example.org",
          additionalEmails: ["second@example.org"],
        },
      ],
    });
    const after = (await emu.client.searchParticipants("study_1", { size: 1 })).results[0];
    expect(after).toMatchObject({
      participantId: before?.participantId,
      email: "changed@example.org",
      additionalEmails: ["second@example.org"],
    });
  });

  it("lets a null firstName or lastName overwrite the stored value", async () => {
    emu = await startTestEmulator({ sizes: { people: 10 } });
    const p = (await emu.snapshot()).people[0] as PersonRecord;
    await emu.client.importParticipants("study_2", {
      people: [{ email: p.email as string, firstName: null, lastName: null }],
    });
    const [after] = await personByEmail(emu, p.email as string);
    expect(after).toMatchObject({ firstName: null, lastName: null });
  });

  it("matches by phone when the identifier is phone", async () => {
    emu = await startTestEmulator({ sizes: { people: 10 } });
    const p = (await emu.snapshot()).people[2] as PersonRecord;
    await emu.client.importParticipants("study_2", {
      identifier: "phone",
      people: [{ phone: p.phone as string, email: "moved@example.org" }],
    });
    const snap = await emu.snapshot();
    expect(snap.people).toHaveLength(10);
    expect(snap.people.find((x) => x.personId === p.personId)?.email).toBe("moved@example.org");
  });

  it("matches by the id of a unique property and refuses a non-unique one with a 400 JSON error", async () => {
    emu = await startTestEmulator({ sizes: { people: 10 } });
    await emu.client.importParticipants("study_2", {
      identifier: "property_1",
      people: [{ firstName: "Matched", properties: [{ propertyId: "property_1", value: "EXT-3" }] }],
    });
    const snap = await emu.snapshot();
    expect(snap.people).toHaveLength(10);
    expect(snap.people.find((x) => x.personId === "person_3")?.firstName).toBe("Matched");

    const participantsBefore = (await emu.snapshot()).participants.length;
    const refused = await raw(emu, "POST", "/studies/study_2/participants/import", {
      body: {
        identifier: "property_5",
        people: [{ properties: [{ propertyId: "property_5", value: "Nurse" }] }],
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.contentType).toMatch(/^application\/json/);
    expect(refused.json()).toEqual({ errors: [{ message: expect.any(String), path: ["identifier"] }] });
    expect((await emu.snapshot()).participants).toHaveLength(participantsBefore);
  });

  it("scopes matching to a population when one is given", async () => {
    emu = await startTestEmulator({ sizes: { people: 9, populations: 3 } });
    const p1 = (await emu.snapshot()).people[0] as PersonRecord;
    expect(p1.populationIds).toEqual(["population_1"]);
    // Same email in another population: a new person there.
    await emu.client.importParticipants("study_2", {
      populationId: "population_2",
      people: [{ email: p1.email as string, firstName: "Other" }],
    });
    const same = await personByEmail(emu, p1.email as string);
    expect(same).toHaveLength(2);
    expect(same.find((x) => x.personId !== p1.personId)?.populationIds).toEqual(["population_2"]);
    expect(same.find((x) => x.personId === p1.personId)?.firstName).toBe(p1.firstName);
    // In its own population: updated.
    await emu.client.importParticipants("study_2", {
      populationId: "population_1",
      people: [{ email: p1.email as string, firstName: "Same" }],
    });
    expect(
      (await personByEmail(emu, p1.email as string)).find((x) => x.personId === p1.personId)?.firstName,
    ).toBe("Same");
    const unknown = await raw(emu, "POST", "/studies/study_2/participants/import", {
      body: { populationId: "population_99", people: [{ email: "x@example.org" }] },
    });
    expect([unknown.status, unknown.text]).toEqual([404, "Population not found"]);
  });

  it("creates a property given by name and type before the import, and uses an existing one unmodified", async () => {
    emu = await startTestEmulator({ sizes: { people: 5 } });
    const before = await emu.snapshot();
    const country = before.personProperties.find((p) => p.name === "Country");
    await emu.client.importParticipants("study_2", {
      people: [
        {
          email: "props@example.org",
          properties: [
            { name: "Shoe size", propertyType: "STRING", value: "42" },
            { name: "Country", propertyType: "STRING", value: "Japan" },
          ],
        },
      ],
    });
    const snap = await emu.snapshot();
    const shoe = snap.personProperties.find((p) => p.name === "Shoe size");
    expect(shoe).toMatchObject({ propertyType: "STRING", isUnique: false });
    expect(snap.personProperties.find((p) => p.name === "Country")).toEqual(country);
    const person = snap.people.find((p) => p.email === "props@example.org");
    expect(person?.properties).toEqual([
      { propertyId: shoe?.propertyId, value: "42" },
      { propertyId: country?.propertyId, value: "Japan" },
    ]);
  });

  it("answers 404 for an unknown study and 400 JSON for a malformed body", async () => {
    emu = await startTestEmulator({ sizes: { people: 5 } });
    const missing = await raw(emu, "POST", "/studies/nope/participants/import", {
      body: { people: [{ email: "a@b.org" }] },
    });
    expect([missing.status, missing.text]).toEqual([404, "Study not found"]);
    const noEmail = await raw(emu, "POST", "/studies/study_2/participants/import", {
      body: { people: [{ firstName: "x" }] },
    });
    expect(noEmail.status).toBe(400);
    expect(noEmail.json<{ errors: { path: unknown[] }[] }>().errors[0]?.path).toEqual(["people", 0, "email"]);
    const badEmail = await raw(emu, "POST", "/studies/study_2/participants/import", {
      body: { people: [{ email: "not-an-email" }] },
    });
    expect(badEmail.status).toBe(400);
    const unknownProp = await raw(emu, "POST", "/studies/study_2/participants/import", {
      body: { people: [{ email: "a@b.org", properties: [{ propertyId: "property_999", value: "x" }] }] },
    });
    expect(unknownProp.status).toBe(400);
    expect(unknownProp.json<{ errors: { path: unknown[] }[] }>().errors[0]?.path).toEqual([
      "people",
      0,
      "properties",
      0,
      "propertyId",
    ]);
    expect((await emu.snapshot()).people).toHaveLength(5);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "../../src/api/index.ts";
import type { Snapshot } from "../../src/emulator/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

type Person = Snapshot["people"][number];

async function peopleAt(e: TestEmulator, key: string): Promise<Person[]> {
  const res = await e.admin(`/people/${encodeURIComponent(key)}`);
  if (res.status === 404) return [];
  return ((await res.json()) as { people: Person[] }).people;
}

describe("a person listed again under the same id", () => {
  it("is found by the later record's email, phone and unique value, and no longer by the earlier one's", async () => {
    emu = await startTestEmulator({ sizes: { people: 4 } });
    const seeded = await emu.snapshot();
    const earlier = seeded.people.find((p) => p.personId === "person_1") as Person;
    const later: Person = {
      ...earlier,
      email: "later@example.org",
      phone: "+15550009999",
      properties: [{ propertyId: "property_1", value: "EXT-LATER" }],
    };
    const put = await emu.admin("/snapshot", {
      method: "PUT",
      body: { ...seeded, people: [...seeded.people, later] },
    });
    expect(put.status).toBe(200);

    expect((await peopleAt(emu, "later@example.org")).map((p) => p.personId)).toEqual(["person_1"]);
    expect(await peopleAt(emu, earlier.email as string)).toEqual([]);
    // The service's own lookups: the earlier email names nobody now.
    const optOut = emu.client.updateOptedOut(earlier.email as string, true);
    await expect(optOut).rejects.toBeInstanceOf(ApiError);
    await expect(optOut).rejects.toMatchObject({ status: 404 });

    // An import matching on the earlier phone or unique value finds nobody and creates a person.
    await emu.client.importParticipants("study_2", {
      identifier: "phone",
      people: [{ phone: earlier.phone as string, firstName: "Phone" }],
    });
    await emu.client.importParticipants("study_2", {
      identifier: "property_1",
      people: [{ firstName: "Unique", properties: [{ propertyId: "property_1", value: "EXT-1" }] }],
    });
    const after = await emu.snapshot();
    expect(after.people.find((p) => p.personId === "person_1")).toEqual(later);
    expect(after.people.filter((p) => p.firstName === "Phone").map((p) => p.personId)).toEqual(["person_5"]);
    expect(after.people.filter((p) => p.firstName === "Unique").map((p) => p.personId)).toEqual(["person_6"]);
    // The answer to the PUT counted the people the store took, not the records listed.
    expect(await put.json()).toMatchObject({ loaded: true, people: 4 });
  });
});

describe("a unique property value two people hold", () => {
  it("still finds the one who keeps it after the other's value changes", async () => {
    emu = await startTestEmulator({ sizes: { people: 4 } });
    const second = (await emu.snapshot()).people.find((p) => p.personId === "person_2") as Person;
    const email = second.email as string;
    // An import matching person_2 by email gives them person_1's External ID, then another.
    for (const value of ["EXT-1", "EXT-2B"]) {
      await emu.client.importParticipants("study_2", {
        people: [{ email, properties: [{ propertyId: "property_1", value }] }],
      });
    }
    await emu.client.importParticipants("study_2", {
      identifier: "property_1",
      people: [{ firstName: "Again", properties: [{ propertyId: "property_1", value: "EXT-1" }] }],
    });
    const people = (await emu.snapshot()).people;
    expect(people).toHaveLength(4);
    const holders = people.filter((p) =>
      p.properties.some((v) => v.propertyId === "property_1" && v.value === "EXT-1"),
    );
    expect(holders.map((p) => [p.personId, p.firstName])).toEqual([["person_1", "Again"]]);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import type { PersonRecord } from "../../src/emulator/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function person(e: TestEmulator, personId: string): Promise<PersonRecord | undefined> {
  return (await e.snapshot()).people.find((p) => p.personId === personId);
}

describe("PUT /people/{personIdOrEmail}/opted-out", () => {
  it("sets isOptedOut by person id and updates the contact status", async () => {
    emu = await startTestEmulator({ sizes: { people: 10 } });
    const res = await emu.client.updateOptedOut("person_2", true);
    expect(res).toEqual({ personId: "person_2", isOptedOut: true, updatedAt: expect.any(String) });
    expect(Number.isNaN(Date.parse(res.updatedAt))).toBe(false);
    expect(await person(emu, "person_2")).toMatchObject({ isOptedOut: true, contactStatus: "OPTED_OUT" });
    await emu.client.updateOptedOut("person_2", false);
    expect(await person(emu, "person_2")).toMatchObject({ isOptedOut: false, contactStatus: "CONTACTABLE" });
  });

  it("looks a valid email up as an email, not as an id", async () => {
    emu = await startTestEmulator({ sizes: { people: 10 } });
    const p = (await person(emu, "person_3")) as PersonRecord;
    const res = await emu.client.updateOptedOut(p.email as string, true);
    expect(res.personId).toBe("person_3");
    // A person whose id looks like an email is still looked up by email.
    await emu.admin("/people", {
      body: { people: [{ personId: "odd@example.org", email: "real@example.org" }] },
    });
    const byEmail = await raw(emu, "PUT", `/people/${encodeURIComponent("odd@example.org")}/opted-out`, {
      body: { isOptedOut: true },
    });
    expect([byEmail.status, byEmail.text]).toEqual([404, "Person not found"]);
  });

  it("finds a person by an additional email, in any case, and no longer by one the person has dropped", async () => {
    emu = await startTestEmulator({ sizes: { people: 3 } });
    await emu.admin("/people", {
      body: {
        people: [
          { personId: "person_50", email: "home@example.org", additionalEmails: ["Work@Example.org"] },
        ],
      },
    });
    const res = await emu.client.updateOptedOut("work@example.org", true);
    expect(res).toMatchObject({ personId: "person_50", isOptedOut: true });
    expect(await person(emu, "person_50")).toMatchObject({ isOptedOut: true, contactStatus: "OPTED_OUT" });

    // An import that replaces the list (spec 4.4, matched on the primary email) takes the old address away.
    await emu.client.importParticipants("study_2", {
      people: [{ email: "home@example.org", additionalEmails: ["new@example.org"] }],
    });
    const old = await raw(emu, "PUT", `/people/${encodeURIComponent("work@example.org")}/opted-out`, {
      body: { isOptedOut: false },
    });
    expect([old.status, old.text]).toEqual([404, "Person not found"]);
    expect((await emu.client.updateOptedOut("new@example.org", false)).personId).toBe("person_50");
  });

  it("updates everyone whose primary or additional email it is, naming a primary holder first", async () => {
    emu = await startTestEmulator({ sizes: { people: 3 } });
    await emu.admin("/people", {
      body: {
        people: [
          { personId: "person_60", email: "other@example.org", additionalEmails: ["shared@example.org"] },
          { personId: "person_61", email: "shared@example.org", additionalEmails: ["shared@example.org"] },
        ],
      },
    });
    const res = await emu.client.updateOptedOut("shared@example.org", true);
    expect(res.personId).toBe("person_61");
    expect(await person(emu, "person_60")).toMatchObject({ isOptedOut: true });
    expect(await person(emu, "person_61")).toMatchObject({ isOptedOut: true });
  });

  it("answers 404 Person not found and 400 JSON for a bad body", async () => {
    emu = await startTestEmulator({ sizes: { people: 3 } });
    const missing = await raw(emu, "PUT", "/people/person_404/opted-out", { body: { isOptedOut: true } });
    expect([missing.status, missing.text]).toEqual([404, "Person not found"]);
    expect(missing.contentType).toMatch(/^text\/plain/);
    const bad = await raw(emu, "PUT", "/people/person_1/opted-out", { body: { isOptedOut: "yes" } });
    expect(bad.status).toBe(400);
    expect(bad.json<{ errors: { path: unknown[] }[] }>().errors[0]?.path).toEqual(["isOptedOut"]);
  });
});

describe("POST /person (deprecated)", () => {
  it("sets the opted-out flag by email and answers email and optedOut", async () => {
    emu = await startTestEmulator({ sizes: { people: 5 } });
    const p = (await person(emu, "person_1")) as PersonRecord;
    const res = await emu.client.legacyOptOut(p.email as string, true);
    expect(res).toEqual({ email: p.email, optedOut: true });
    expect(await person(emu, "person_1")).toMatchObject({ isOptedOut: true, contactStatus: "OPTED_OUT" });
  });

  it("finds a person by an additional email", async () => {
    emu = await startTestEmulator({ sizes: { people: 3 } });
    await emu.admin("/people", {
      body: {
        people: [
          { personId: "person_50", email: "home@example.org", additionalEmails: ["work@example.org"] },
        ],
      },
    });
    expect(await emu.client.legacyOptOut("work@example.org", true)).toEqual({
      email: "work@example.org",
      optedOut: true,
    });
    expect(await person(emu, "person_50")).toMatchObject({ isOptedOut: true, contactStatus: "OPTED_OUT" });
  });

  it("answers 404 for an unknown email and 400 for a missing one", async () => {
    emu = await startTestEmulator({ sizes: { people: 5 } });
    const missing = await raw(emu, "POST", "/person", {
      body: { email: "nobody@example.org", optedOut: true },
    });
    expect([missing.status, missing.text]).toEqual([404, "Person not found"]);
    expect((await raw(emu, "POST", "/person", { body: { optedOut: true } })).status).toBe(400);
    expect(missing.headers.get("deprecation")).toBe("true");
  });
});

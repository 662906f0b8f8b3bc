import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runImport, runOptOut } from "../../src/imports/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import { type Scratch, scratch } from "./fixtures.ts";
import { loadImportJob, loadOptOutJob, sample } from "./helpers.ts";

let emu: TestEmulator;
let redis: TestRedis;
let s: Scratch;
beforeEach(async () => {
  emu = await startTestEmulator();
  redis = await withTestRedis();
  s = await scratch();
});
afterEach(async () => {
  await emu.close();
  await redis.cleanup();
  await s.cleanup();
});

async function importSample(job: string, file: string) {
  return runImport({
    file: sample(file),
    // These samples' counts are pinned row by row under reject: each failing optional value rejects its row.
    definition: { ...loadImportJob(job), invalidOptionalValues: "reject" },
    client: emu.client,
    rejectsFile: path.join(s.dir, `${job}.rejects.csv`),
    ledger: { redis: redis.redis, prefix: redis.prefix },
    workDir: s.dir,
  });
}

async function personBy(
  pred: (p: Awaited<ReturnType<TestEmulator["snapshot"]>>["people"][number]) => boolean,
) {
  const snap = await emu.snapshot();
  const person = snap.people.find(pred);
  const participants = person ? snap.participants.filter((p) => p.personId === person.personId) : [];
  return { snap, person, studies: participants.map((p) => p.studyId) };
}

describe("samples imported end to end into the emulator", () => {
  it("imports the HubSpot export: populations by lifecycle stage, properties, merged duplicates", async () => {
    const report = await importSample("hubspot-contacts", "hubspot-contacts.csv");
    expect(report).toMatchObject({
      rowsRead: 13,
      // Yuki's row leaves out its last, empty cell: read as a short row since issue 30, not rejected.
      imported: 7,
      rejected: 5,
      duplicates: 1,
      blankRows: 1,
      batches: 3,
      shortRows: 1,
    });
    expect(report.importIds).toHaveLength(3);
    expect(report.unmappedColumns).toEqual([]);
    expect(report.ignoredColumns).toEqual(["Create Date"]);

    const { snap, person: priya, studies } = await personBy((p) => p.email === "priya.patel@example.org");
    expect(priya).toMatchObject({
      firstName: "Priya",
      lastName: "Patel-Shah",
      phone: "+14155550132",
      isOptedOut: false,
      lastContactDate: "2024-03-20",
      additionalEmails: ["priya@home.example.net", "p.patel@acme.example.com"],
      populationIds: ["population_1"],
    });
    expect(studies).toEqual(["study_1"]);
    const company = snap.personProperties.find((p) => p.name === "Company");
    expect(company).toMatchObject({ propertyType: "STRING" });
    expect(priya?.properties).toEqual(
      expect.arrayContaining([
        { propertyId: "property_2", value: "51010" },
        { propertyId: "property_5", value: "Director of Product" },
        { propertyId: company?.propertyId, value: "Acme, Inc." },
      ]),
    );
    const zoe = snap.people.find((p) => p.email === "zoe.mueller@example.org");
    expect(zoe).toMatchObject({
      firstName: "Zoë",
      phone: "+4930901820",
      additionalPhones: ["+4915123456789"],
    });
    expect(zoe?.populationIds).toEqual(["population_2"]);
    expect(snap.people.find((p) => p.email === "noah.kim@example.org")?.populationIds).toEqual([
      "population_3",
    ]);
    for (const rejected of ["marco.rossi@", "ana.lima@example.org", "fatima.zahra@example.org"]) {
      expect(snap.people.some((p) => p.email === rejected)).toBe(false);
    }
    expect(snap.people.find((p) => p.email === "yuki.tanaka@example.org")).toMatchObject({
      firstName: "Yuki",
      phone: "+81312345678",
    });
    expect((await emu.requests()).byRoute.importParticipants).toEqual({ "200": 3 });
  });

  it("imports the Salesforce report matched on External ID, with a blank first name sent as null", async () => {
    // A person the service already knows by External ID (in the population) gets updated, not duplicated.
    await emu.client.importParticipants("study_9", {
      identifier: "property_1",
      populationId: "population_1",
      people: [
        {
          firstName: "Kasper",
          lastName: "Østergaard",
          properties: [{ propertyId: "property_1", value: "0035g00000AbCdE2" }],
        },
      ],
    });
    const report = await importSample("salesforce-contacts", "salesforce-contact-report.csv");
    expect(report).toMatchObject({
      rowsRead: 9,
      imported: 4,
      rejected: 4,
      duplicates: 1,
      encoding: "windows-1252",
    });
    expect(report.rejectedByReason).toMatchObject({ "row has 1 cells, the header has 14": 2 });

    const {
      snap,
      person: francois,
      studies,
    } = await personBy((p) =>
      p.properties.some((x) => x.propertyId === "property_1" && x.value === "0035g00000AbCdE1"),
    );
    expect(francois).toMatchObject({
      firstName: "François",
      lastName: "Lefèvre",
      email: "francois.lefevre@example.net",
      phone: "+14155550172",
      isOptedOut: true,
      lastContactDate: "2024-03-20",
      populationIds: ["population_1"],
    });
    expect(francois?.additionalPhones).toEqual(["+14155550171", "+14155550170"]);
    expect(studies).toEqual(["study_2"]);
    const kasper = snap.people.filter((p) => p.properties.some((x) => x.value === "0035g00000AbCdE2"));
    expect(kasper).toHaveLength(1);
    expect(kasper[0]?.firstName).toBeNull();
    expect(snap.personProperties.some((p) => p.name === "Mailing country")).toBe(true);
  });

  it("imports the Mailchimp audience workspace-wide, lists its unmapped columns", async () => {
    const report = await importSample("mailchimp-audience", "mailchimp-audience.csv");
    expect(report).toMatchObject({ rowsRead: 6, imported: 3, rejected: 2, duplicates: 1 });
    expect(report.unmappedColumns).toEqual(["Address", "Birthday", "CC", "REGION", "LAST_CHANGED"]);
    const { snap, person: miguel, studies } = await personBy((p) => p.email === "miguel.santos@example.com");
    expect(miguel).toMatchObject({ firstName: "Miguel", lastName: "Santos Silva", phone: "+5511912345678" });
    expect(studies).toEqual(["study_3"]);
    const tags = snap.personProperties.find((p) => p.name === "Mailchimp tags");
    expect(snap.people.find((p) => p.email === "olivia.brown@example.com")?.properties).toContainEqual({
      propertyId: tags?.propertyId,
      value: '"beta testers","mobile"',
    });
  });

  it("opts out the people on a list, one request each, unknown people as rejects", async () => {
    await importSample("hubspot-contacts", "hubspot-contacts.csv");
    const report = await runOptOut({
      file: sample("opt-out-list.csv"),
      definition: loadOptOutJob("opt-out-list"),
      client: emu.client,
      rejectsFile: path.join(s.dir, "opt-out.rejects.csv"),
    });
    expect(report).toMatchObject({ rowsRead: 6, updated: 2, rejected: 3, duplicates: 1, requests: 4 });
    expect(report.rejectedByReason).toEqual({ "person not found": 2, "not an email or a person id": 1 });
    const snap = await emu.snapshot();
    expect(snap.people.find((p) => p.email === "priya.patel@example.org")?.isOptedOut).toBe(true);
    expect(snap.people.find((p) => p.personId === "person_1")?.isOptedOut).toBe(true);
    expect((await emu.requests()).byRoute.updateOptedOut).toEqual({ "200": 2, "404": 2 });
  });
});

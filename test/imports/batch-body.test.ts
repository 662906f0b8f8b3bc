import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ImportParticipantsBody } from "../../src/api/schemas/index.ts";
import { runImport } from "../../src/imports/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type Scratch, scratch } from "./fixtures.ts";
import { loadImportJob, sample } from "./helpers.ts";

let emu: TestEmulator;
let s: Scratch;
beforeEach(async () => {
  emu = await startTestEmulator();
  s = await scratch();
});
afterEach(async () => {
  await emu.close();
  await s.cleanup();
});

/** A client whose fetch keeps the bytes of every import body on their way to the emulator. */
function recordingClient(sent: string[]) {
  return emu.clientFor({
    fetch: async (url, init) => {
      if (String(url).endsWith("/participants/import") && init?.body instanceof Uint8Array)
        sent.push(Buffer.from(init.body).toString("utf8"));
      return fetch(url, init);
    },
  });
}

describe("the body of an import batch goes out as built", () => {
  it.each([
    ["hubspot-contacts", "hubspot-contacts.csv"],
    ["mailchimp-audience", "mailchimp-audience.csv"],
    ["salesforce-contacts", "salesforce-contact-report.csv"],
  ])("%s: every body sent is one the contract's schema takes whole", async (job, file) => {
    const sent: string[] = [];
    const definition = { ...loadImportJob(job), batchSize: 7 };
    const report = await runImport({
      file: sample(file),
      definition,
      client: recordingClient(sent),
      rejectsFile: path.join(s.dir, `${job}.rejects.csv`),
      workDir: s.dir,
    });
    expect(report.imported).toBeGreaterThan(0);
    expect(sent).toHaveLength(report.requests);
    let people = 0;
    for (const text of sent) {
      const json = JSON.parse(text) as { people: unknown[] };
      // Parsed whole, and nothing stripped or defaulted: the schema would send the same bytes.
      expect(ImportParticipantsBody.parse(json)).toEqual(json);
      people += json.people.length;
    }
    expect(people).toBe(report.imported);
  });
});

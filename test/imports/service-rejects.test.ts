import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient, type ImportPerson } from "../../src/api/index.ts";
import { runImport, submitBatch } from "../../src/imports/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { sendJson, startTestServer, type TestServer } from "../helpers/http-server.ts";
import { type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

const entry = (row: number, person: ImportPerson) => ({ rows: [row], person: JSON.stringify(person) });

describe("service-side rejects, against the emulator", () => {
  let emu: TestEmulator;
  beforeEach(async () => {
    emu = await startTestEmulator();
  });
  afterEach(async () => {
    await emu.close();
  });

  it("rejects exactly the people a 400's paths point at and resends the rest", async () => {
    const entries = [1, 2, 3, 4, 5].map((i) =>
      entry(i + 1, {
        email: `svc${i}@example.net`,
        properties: [{ propertyId: i === 2 || i === 4 ? "property_404" : "property_5", value: "x" }],
      }),
    );
    const out = await submitBatch(
      emu.client,
      { studyId: "study_1", identifier: "email", population: null },
      entries,
    );
    expect(out.rejected.map((r) => [r.entry.rows[0], r.reason])).toEqual([
      [3, "service: properties.0.propertyId: Property not found"],
      [5, "service: properties.0.propertyId: Property not found"],
    ]);
    expect(out.imported.map((e) => e.rows[0])).toEqual([2, 4, 6]);
    expect(out.importIds).toHaveLength(1);
    expect((await emu.requests()).byRoute.importParticipants).toEqual({ "200": 1, "400": 1 });
  });

  it("splits a batch the service refuses as too large", async () => {
    const client = emu.clientFor({ validateRequests: false });
    const entries = Array.from({ length: 1200 }, (_v, i) => entry(i + 2, { email: `big${i}@example.net` }));
    const out = await submitBatch(
      client,
      { studyId: "study_1", identifier: "email", population: null },
      entries,
    );
    expect(out.imported).toHaveLength(1200);
    expect(out.rejected).toEqual([]);
    expect((await emu.requests()).byRoute.importParticipants).toEqual({ "200": 2, "400": 1 });
  });
});

describe("service-side rejects that do not say which person", () => {
  let server: TestServer;
  let s: Scratch;
  beforeEach(async () => {
    s = await scratch();
    // A domain refusal in plain text for any batch holding a "bad…" person: only bisection can find them.
    server = await startTestServer((req, res) => {
      const body = JSON.parse(req.body) as { people: { email: string }[] };
      if (body.people.some((p) => p.email.startsWith("bad"))) {
        res.writeHead(400, { "content-type": "text/plain" });
        res.end("Bad Request");
        return;
      }
      sendJson(res, 200, {
        message: "ok",
        count: body.people.length,
        importId: `import_${req.url.length}_${Math.random()}`,
      });
    });
  });
  afterEach(async () => {
    await server.close();
    await s.cleanup();
  });

  it("bisects until the refused rows are found, and writes them to the rejects file", async () => {
    const emails = ["a", "b", "bad1", "c", "d", "e", "bad2", "f"].map((n) => `${n}@example.net`);
    const file = await s.file("svc.csv", `Email,Name\n${emails.map((e, i) => `${e},N${i}`).join("\n")}\n`);
    const report = await runImport({
      file,
      definition: simpleDefinition({ batchSize: 8 }),
      client: createClient({ baseUrl: server.baseUrl, token: "t", retry: { maxAttempts: 1 } }),
      rejectsFile: path.join(s.dir, "rejects.csv"),
      workDir: s.dir,
    });
    expect(report).toMatchObject({ rowsRead: 8, imported: 6, rejected: 2, duplicates: 0 });
    expect(report.rejectedByReason).toEqual({ "service: Bad Request": 2 });
    const rows = parse(await readFile(report.rejectsFile as string)) as string[][];
    expect(rows.slice(1).map((r) => r.slice(0, 3))).toEqual([
      ["4", "service: Bad Request", "bad1@example.net"],
      ["8", "service: Bad Request", "bad2@example.net"],
    ]);
    // 1 + 2 halves + 4 quarters + 4 single people in the two refused quarters.
    expect(server.requests).toHaveLength(11);
  });
});

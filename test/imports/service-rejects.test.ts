import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient, type ImportPerson } from "../../src/api/index.ts";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { ImportRefusedError, runImport, submitBatch } from "../../src/imports/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { sendJson, startTestServer, type TestServer } from "../helpers/http-server.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
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
    const notFound = {
      code: "validation_failed",
      path: ["properties", 0, "propertyId"],
      message: "service: properties.0.propertyId: Property not found",
    };
    expect(out.rejected.map((r) => [r.entry.rows[0], r.problems])).toEqual([
      [3, [notFound]],
      [5, [notFound]],
    ]);
    expect(out.imported.map((e) => e.rows[0])).toEqual([2, 4, 6]);
    expect(out.importIds).toHaveLength(1);
    expect((await emu.requests()).byRoute.importParticipants).toEqual({ "200": 1, "400": 1 });
  });

  it("writes the service's code and path of each row it refused to the rejects file and the report", async () => {
    const s = await scratch();
    try {
      // Rows with a Legacy ID send property_404, which the emulator does not know: those people alone are refused.
      const lines = ["Email,Name,Legacy ID"];
      for (let i = 1; i <= 12; i++) lines.push(`part${i}@example.net,P${i},${i % 4 === 0 ? `L${i}` : ""}`);
      const file = await s.file("part.csv", `${lines.join("\n")}\n`);
      const definition = simpleDefinition({
        columns: [
          { column: "Email", to: "email" },
          { column: "Name", to: "firstName" },
          { column: "Legacy ID", to: { propertyId: "property_404" } },
        ],
        batchSize: 5,
      });
      const report = await runImport({
        file,
        definition,
        client: emu.client,
        rejectsFile: path.join(s.dir, "rejects.csv"),
        workDir: s.dir,
      });
      expect(report).toMatchObject({ rowsRead: 12, imported: 9, rejected: 3 });
      const reason = "service: properties.0.propertyId: Property not found";
      expect(report.rejectedByCode).toEqual({ validation_failed: 3 });
      expect(report.rejectedByReason).toEqual({ [reason]: 3 });
      const rows = parse(await readFile(report.rejectsFile as string)) as string[][];
      expect(rows).toEqual([
        ["_source_row", "_reject_reason", "_reject_code", "Email", "Name", "Legacy ID"],
        ["5", reason, "validation_failed", "part4@example.net", "P4", "L4"],
        ["9", reason, "validation_failed", "part8@example.net", "P8", "L8"],
        ["13", reason, "validation_failed", "part12@example.net", "P12", "L12"],
      ]);
      const people = (await emu.snapshot()).people.filter((p) => p.email?.startsWith("part"));
      expect(people).toHaveLength(9);
    } finally {
      await s.cleanup();
    }
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

  it("fails the run after one request when the service refuses the request itself (a non-unique identifier)", async () => {
    const s = await scratch();
    try {
      const lines = ["Email,Country"];
      for (let i = 1; i <= 40; i++) lines.push(`nonunique${i}@example.net,C${i}`);
      const file = await s.file("nonunique.csv", `${lines.join("\n")}\n`);
      const definition = ImportJobDefinition.parse({
        kind: "import",
        target: { studyId: "study_2", identifier: "property:property_3" }, // Country: not unique
        columns: [
          { column: "Email", to: "email" },
          { column: "Country", to: { propertyId: "property_3" } },
        ],
        batchSize: 10,
      });
      const rejectsFile = path.join(s.dir, "rejects.csv");
      const run = runImport({ file, definition, client: emu.client, rejectsFile, workDir: s.dir });
      await expect(run).rejects.toBeInstanceOf(ImportRefusedError);
      await expect(run).rejects.toMatchObject({
        code: "import_rejected_batch",
        retryable: false,
        errors: [{ path: ["identifier"] }],
        message: expect.stringContaining("identifier: Identifier property property_3 is not unique"),
      });
      // One request, not a bisection of 40 people into ~80.
      expect((await emu.requests()).byRoute.importParticipants).toEqual({ "400": 1 });
      expect((await emu.snapshot()).people.some((p) => p.email?.startsWith("nonunique"))).toBe(false);
    } finally {
      await s.cleanup();
    }
  });
});

describe("service-side refusals of the request itself", () => {
  let server: TestServer;
  let s: Scratch;
  let redis: TestRedis;
  /** The JSON 400 errors the server answers a batch of population_2 with. */
  let refusal: { path: (string | number)[]; message: string }[];
  beforeEach(async () => {
    s = await scratch();
    redis = await withTestRedis();
    refusal = [];
    server = await startTestServer((req, res) => {
      const body = JSON.parse(req.body) as { populationId?: string; people: { email?: string }[] };
      if (body.populationId === "population_2" && refusal.length > 0) {
        sendJson(res, 400, { message: "Bad Request", errors: refusal });
        return;
      }
      // A person the service will not take, named by its path.
      const blocked = body.people.findIndex((p) => p.email?.startsWith("blocked"));
      if (blocked >= 0) {
        sendJson(res, 400, { errors: [{ path: ["people", blocked, "email"], message: "Email is blocked" }] });
        return;
      }
      sendJson(res, 200, { message: "ok", count: body.people.length, importId: `import_${Math.random()}` });
    });
  });
  afterEach(async () => {
    await server.close();
    await redis.cleanup();
    await s.cleanup();
  });

  const client = () => createClient({ baseUrl: server.baseUrl, token: "t", retry: { maxAttempts: 1 } });
  const people = Array.from({ length: 8 }, (_v, i) => entry(i + 2, { email: `req${i}@example.net` }));

  it.each([
    ["populationId", [{ path: ["populationId"], message: "Population is archived" }]],
    ["the whole body", [{ path: [], message: "Expected object" }]],
    [
      "two places outside people",
      [
        { path: ["identifier"], message: "Unknown identifier" },
        { path: ["populationId"], message: "Population is archived" },
      ],
    ],
  ])("throws after one request for a 400 at %s", async (_what, errors) => {
    refusal = errors;
    const sent = submitBatch(
      client(),
      { studyId: "study_1", identifier: "email", population: "population_2" },
      people,
    );
    await expect(sent).rejects.toBeInstanceOf(ImportRefusedError);
    await expect(sent).rejects.toThrow(errors[0]?.message as string);
    expect(server.requests).toHaveLength(1);
  });

  /** An import of a file whose Panel column picks each row's population, eu or us. */
  function panelImport(file: string, batchSize: number) {
    const definition = simpleDefinition({
      batchSize,
      target: {
        studyId: "study_1",
        population: { column: "Panel", values: { eu: "population_1", us: "population_2" } },
      },
    });
    return {
      file,
      definition,
      client: client(),
      rejectsFile: path.join(s.dir, "rejects.csv"),
      ledger: { redis: redis.redis, prefix: redis.prefix },
      workDir: s.dir,
    };
  }

  it("stops the run at the refused batch and keeps the finished ones in the ledger", async () => {
    const rows = ["Email,Name,Panel"];
    for (let i = 1; i <= 4; i++) rows.push(`eu${i}@example.net,E${i},eu`);
    for (let i = 1; i <= 4; i++) rows.push(`us${i}@example.net,U${i},us`);
    const file = await s.file("panels.csv", `${rows.join("\n")}\n`);
    const options = panelImport(file, 4);
    refusal = [{ path: ["populationId"], message: "Population is archived" }];
    await expect(runImport(options)).rejects.toThrow(/populationId: Population is archived/);
    expect(server.requests).toHaveLength(2); // batch 0 accepted, batch 1 refused once

    refusal = [];
    const report = await runImport(options);
    expect(report).toMatchObject({ rowsRead: 8, imported: 8, rejected: 0, batches: 2, batchesResumed: 1 });
    expect(server.requests).toHaveLength(3); // only the refused batch again
  });

  it("keeps the service's code and path of a row refused in a batch that a rerun resumes from the ledger", async () => {
    const rows = [
      "Email,Name,Panel",
      "eu1@example.net,E1,eu",
      "blocked@example.net,B,eu",
      "eu2@example.net,E2,eu",
    ];
    for (let i = 1; i <= 3; i++) rows.push(`us${i}@example.net,U${i},us`);
    const file = await s.file("blocked.csv", `${rows.join("\n")}\n`);
    const options = panelImport(file, 3);
    refusal = [{ path: ["populationId"], message: "Population is archived" }];
    await expect(runImport(options)).rejects.toThrow(/populationId: Population is archived/);

    refusal = [];
    const report = await runImport(options);
    expect(report).toMatchObject({ rowsRead: 6, imported: 5, rejected: 1, batchesResumed: 1 });
    expect(report.rejectedByCode).toEqual({ validation_failed: 1 });
    const rejects = parse(await readFile(report.rejectsFile as string)) as string[][];
    expect(rejects.slice(1)).toEqual([
      ["3", "service: email: Email is blocked", "validation_failed", "blocked@example.net", "B", "eu"],
    ]);
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
    expect(report.rejectedByCode).toEqual({ bad_request: 2 });
    const rows = parse(await readFile(report.rejectsFile as string)) as string[][];
    expect(rows.slice(1).map((r) => r.slice(0, 4))).toEqual([
      ["4", "service: Bad Request", "bad_request", "bad1@example.net"],
      ["8", "service: Bad Request", "bad_request", "bad2@example.net"],
    ]);
    // 1 + 2 halves + 4 quarters + 4 single people in the two refused quarters.
    expect(server.requests).toHaveLength(11);
  });
});

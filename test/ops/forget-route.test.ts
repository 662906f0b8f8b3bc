import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ForgetReceipt } from "../../src/forget/index.ts";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { AUTH, call, type OpsProject, withOpsProject } from "./ops-fixture.ts";

const EMAIL = "erase.me@ops-forget.example";
const OTHER = "keep.me@ops-forget.example";

describe("POST /api/forget", () => {
  let emu: TestEmulator;
  let project: OpsProject;
  let ops: OpsServer;
  let rejects: string;

  beforeAll(async () => {
    emu = await startTestEmulator();
    project = await withOpsProject({ baseUrl: emu.baseUrl, token: emu.token });
    ops = await startOpsServer({ config: project.config, logger: project.logger });
    await emu.admin("/people", { body: { people: [{ email: EMAIL }, { email: OTHER }] } });
    const imports = path.join(project.config.paths.dataDir, "imports");
    await mkdir(imports, { recursive: true });
    rejects = path.join(imports, "list.rejects.csv");
    // Semicolons, a BOM and CRLF, as a European export's rejects keep them.
    await writeFile(
      rejects,
      `\uFEFF_source_row;_reject_reason;Email\r\n2;bad;${EMAIL}\r\n3;"bad; twice";${OTHER}\r\n`,
      { mode: 0o600 },
    );
  });
  afterAll(async () => {
    await ops?.close();
    await emu?.close();
    await project?.cleanup();
  });

  it("is behind the ops password", async () => {
    const res = await call(`${ops.url}/api/forget`, { body: { identifiers: [EMAIL] } });
    expect(res.status).toBe(401);
  });

  it("refuses a request from another site", async () => {
    const res = await call(`${ops.url}/api/forget`, {
      headers: { ...AUTH, "sec-fetch-site": "cross-site" },
      body: { identifiers: [EMAIL] },
    });
    expect(res.status).toBe(403);
    expect(await readFile(rejects, "utf8")).toContain(EMAIL);
  });

  it("refuses a body without identifiers, and a value that is neither an email nor a phone, without echoing it", async () => {
    const empty = await call(`${ops.url}/api/forget`, { headers: AUTH, body: { identifiers: [] } });
    expect(empty.status).toBe(400);
    expect((empty.body as { error: string }).error).toBe("ops_invalid_request");
    const odd = await call(`${ops.url}/api/forget`, {
      headers: AUTH,
      body: { identifiers: ["secret-name"] },
    });
    expect(odd.status).toBe(400);
    expect(odd.text).not.toContain("secret-name");
  });

  it("forgets the person, opts them out in the service, and answers the receipt", async () => {
    const res = await call(`${ops.url}/api/forget`, {
      headers: AUTH,
      body: { identifiers: [EMAIL], optOut: true },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.text).not.toContain(EMAIL);
    const receipt = res.body as ForgetReceipt;
    expect(receipt.dataFolder.files).toEqual([
      { file: path.join("imports", "list.rejects.csv"), action: "rewritten", rows: 1 },
    ]);
    expect(receipt.optOut).toEqual({ optedOut: 1, notFound: 0, failed: 0 });
    // The rest of the file byte for byte: BOM, delimiter, quoting and line endings.
    expect(await readFile(rejects, "utf8")).toBe(
      `\uFEFF_source_row;_reject_reason;Email\r\n3;"bad; twice";${OTHER}\r\n`,
    );
    const person = (await (await emu.admin(`/people/${EMAIL}`)).json()) as {
      people: { isOptedOut: boolean }[];
    };
    expect(person.people[0]?.isOptedOut).toBe(true);
    const other = (await (await emu.admin(`/people/${OTHER}`)).json()) as {
      people: { isOptedOut: boolean }[];
    };
    expect(other.people[0]?.isOptedOut).toBe(false);
    expect(JSON.parse(await readFile(receipt.receiptFile, "utf8"))).toMatchObject({
      kind: "forget",
      subjects: receipt.subjects,
    });
    expect(project.logText()).not.toContain(EMAIL);
  });
});

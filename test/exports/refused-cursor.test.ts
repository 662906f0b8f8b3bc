import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ApiClient, createClient } from "../../src/api/index.ts";
import type { ExportJobDefinitionInput } from "../../src/config/export-job.ts";
import { encodeCursor } from "../../src/emulator/paging.ts";
import { runExport } from "../../src/exports/index.ts";
import { cursorRefused } from "../../src/exports/paged-pass.ts";
import { daysCovering, sentWithinFilter } from "../../src/exports/streams/email-messages.ts";
import type { Sink } from "../../src/sinks/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { definition, settled, type TestWarehouse, testWarehouse } from "./export-fixture.ts";

/**
 * Both paged streams resume a pass from the cursor a killed run saved. When
 * the service refuses that cursor — a 400, JSON or plain text — the pass is
 * read again from its first page; any other failure fails the resource and
 * keeps the saved cursor for the next run. Same rule, same outcome, for the
 * full refresh and for the email window.
 */

const PAGE_SIZE = 10;
const DAY_MS = 86_400_000;

/** A saved pass as a killed run of each stream leaves it, its cursor given. */
interface StreamCase {
  name: string;
  input: Omit<ExportJobDefinitionInput, "kind">;
  resource: "participants" | "email_messages";
  route: string;
  stateKey: string;
  idColumn: string;
  savedState(cursor: string, now: Date): unknown;
  /** The ids the service holds for the pass, read page by page. */
  serviceIds(client: ApiClient, now: Date): Promise<string[]>;
}

async function collect<T>(pages: AsyncIterable<{ results: T[] }>, id: (r: T) => string): Promise<string[]> {
  const ids: string[] = [];
  for await (const page of pages) ids.push(...page.results.map(id));
  return ids;
}

const CASES: StreamCase[] = [
  {
    name: "a full refresh (participants)",
    input: { resources: ["participants"], studies: ["study_1"], pageSize: PAGE_SIZE },
    resource: "participants",
    route: "searchParticipants",
    stateKey: "participants:study=study_1",
    idColumn: "participant_id",
    savedState: (cursor, now) => ({
      pass: { startedAt: now.toISOString(), runIds: ["killed-run"], cursor, total: null },
    }),
    serviceIds: (client) => collect(client.participantPages("study_1"), (p) => p.participantId),
  },
  {
    name: "the email window (email messages)",
    input: { resources: ["email_messages"], pageSize: PAGE_SIZE, emails: { backfillDays: 30 } },
    resource: "email_messages",
    route: "searchEmails",
    stateKey: "email_messages",
    idColumn: "id",
    savedState: (cursor, now) => {
      const since = new Date(now.getTime() - 30 * DAY_MS);
      const amount = daysCovering(since, now);
      return {
        highWater: null,
        pass: { since: since.toISOString(), amount, cursor, maxSentAt: null, total: null },
      };
    },
    serviceIds: (client, now) =>
      collect(
        client.emailPages({
          filter: sentWithinFilter(daysCovering(new Date(now.getTime() - 30 * DAY_MS), now)),
        }),
        (m) => m.id,
      ),
  },
];

/**
 * The emulator behind a proxy that answers a search carrying one of
 * `answers`' cursors itself: the emulator never answers a cursor of its own
 * with anything but a page, and a real service's stale cursor may be refused
 * in ways the emulator has no fault for.
 */
interface Proxy {
  baseUrl: string;
  answers: Map<string, { status: number; body: string }>;
  /** How often each cursor was answered by the proxy. */
  answered: Map<string, number>;
  close(): Promise<void>;
}

async function startProxy(emu: TestEmulator): Promise<Proxy> {
  const answers = new Map<string, { status: number; body: string }>();
  const answered = new Map<string, number>();
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    for (const [cursor, answer] of answers) {
      if (body.includes(JSON.stringify(cursor))) {
        answered.set(cursor, (answered.get(cursor) ?? 0) + 1);
        res.writeHead(answer.status, { "content-type": "text/plain" }).end(answer.body);
        return;
      }
    }
    const upstream = await fetch(`${emu.origin}${req.url}`, {
      method: req.method ?? "GET",
      headers: Object.fromEntries(
        Object.entries(req.headers).filter(
          (e): e is [string, string] =>
            typeof e[1] === "string" && e[0] !== "host" && e[0] !== "content-length",
        ),
      ),
      ...(body === "" ? {} : { body }),
    });
    const headers: Record<string, string> = {};
    upstream.headers.forEach((value, key) => {
      if (!["content-length", "content-encoding", "transfer-encoding", "connection"].includes(key))
        headers[key] = value;
    });
    res.writeHead(upstream.status, headers).end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${new URL(emu.baseUrl).pathname}`,
    answers,
    answered,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let emu: TestEmulator | undefined;
let proxy: Proxy | undefined;
let sink: Sink | undefined;
let warehouse: TestWarehouse | undefined;
let client: ApiClient;
let now: Date;

beforeEach(async () => {
  emu = await startTestEmulator({ sizes: { people: 300, participantsPerStudy: 45, emailMessages: 300 } });
  proxy = await startProxy(emu);
  client = createClient({ baseUrl: proxy.baseUrl, token: emu.token, retry: { maxAttempts: 1 } });
  warehouse = await testWarehouse("duckdb");
  sink = await warehouse.open();
  const res = await emu.admin("/clock");
  now = new Date(((await res.json()) as { now: string }).now);
});
afterEach(async () => {
  await sink?.close();
  await proxy?.close();
  await emu?.close();
  await warehouse?.cleanup();
  emu = proxy = sink = warehouse = undefined;
});

/** Leaves the stream's state as a run killed mid-pass at `cursor` would. */
async function savePass(c: StreamCase, cursor: string): Promise<void> {
  await sink!.prepare([]);
  await sink!.commit({
    runId: "killed-run",
    state: { stream: c.stateKey, value: c.savedState(cursor, now) },
  });
}

function exportOnce(c: StreamCase) {
  return settled(runExport({ definition: definition(c.input), client, sink: sink!, now: () => now }));
}

async function loadedIds(c: StreamCase): Promise<string[]> {
  return (await sink!.readTable(c.resource)).map((r) => r[c.idColumn] as string).sort();
}

describe.each(CASES)("a saved cursor of $name", (c) => {
  it("refused as invalid (400 JSON): the pass is read again from its first page", async () => {
    const report = await exportOnce(c);
    await savePass(c, "not-a-cursor-of-this-service");

    const again = await exportOnce(c);
    expect(again.resources[c.resource]?.status).toBe("succeeded");
    const expected = (await c.serviceIds(client, now)).sort();
    expect(expected.length).toBeGreaterThan(2 * PAGE_SIZE);
    expect(await loadedIds(c)).toEqual(expected);
    // The refused request, then every page from the first, as the first run read them.
    const counts = await emu!.requests();
    expect(counts.byRoute[c.route]?.["400"]).toBe(1);
    expect(again.resources[c.resource]?.pages).toBe(report.resources[c.resource]?.pages);
    expect(await sink!.readState(c.stateKey)).not.toHaveProperty("pass");
  });

  it("refused by a domain rule (400 plain text): the pass is read again from its first page", async () => {
    // Off the page boundaries, so the pass read again from the top never sends it.
    const stale = encodeCursor(2 * PAGE_SIZE + 3);
    proxy!.answers.set(stale, { status: 400, body: "Bad Request" });
    await savePass(c, stale);

    const report = await exportOnce(c);
    expect(report.resources[c.resource]?.status).toBe("succeeded");
    expect(proxy!.answered.get(stale)).toBe(1);
    expect(await loadedIds(c)).toEqual((await c.serviceIds(client, now)).sort());
    expect(await sink!.readState(c.stateKey)).not.toHaveProperty("pass");
  });

  it("answered with a failure that is no refusal (500): the resource fails and the cursor stays saved", async () => {
    const cursor = encodeCursor(2 * PAGE_SIZE);
    proxy!.answers.set(cursor, { status: 500, body: "Internal Server Error" });
    await savePass(c, cursor);

    const report = await exportOnce(c);
    expect(report.resources[c.resource]).toMatchObject({ status: "failed", errorCode: "server_error" });
    expect(proxy!.answered.get(cursor)).toBe(1);
    expect(await loadedIds(c)).toEqual([]);
    expect(await sink!.readState(c.stateKey)).toMatchObject({ pass: { cursor } });
  });
});

describe("the rule for a refused cursor", () => {
  it("is any 400 the service answered, and nothing the client refused to send", async () => {
    const emulator = await startTestEmulator();
    try {
      const json = await emulator.client
        .searchEmails({ pageInfo: { size: 10, startCursor: "not-a-cursor" } })
        .catch((e: unknown) => e);
      expect(json).toMatchObject({ code: "validation_failed", status: 400 });
      expect(cursorRefused(json)).toBe(true);
      const unsent = await emulator.client
        .searchEmails({ pageInfo: { size: 1000 } })
        .catch((e: unknown) => e);
      expect(unsent).toMatchObject({ code: "bad_request", status: undefined });
      expect(cursorRefused(unsent)).toBe(false);
      const forbidden = await emulator
        .clientFor({ token: "no-such-token" })
        .searchEmails({ pageInfo: { size: 10 } })
        .catch((e: unknown) => e);
      expect(forbidden).toMatchObject({ status: 401 });
      expect(cursorRefused(forbidden)).toBe(false);
    } finally {
      await emulator.close();
    }
  });
});

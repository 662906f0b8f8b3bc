import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExportJobDefinitionInput } from "../../src/config/export-job.ts";
import { runExport } from "../../src/exports/index.ts";
import type { Sink } from "../../src/sinks/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import {
  comparable,
  definition,
  type SinkKind,
  type TestWarehouse,
  testWarehouse,
} from "./export-fixture.ts";

const CHILD = new URL("./fixtures/export-child.ts", import.meta.url).pathname;

interface KillCase {
  what: string;
  input: ExportJobDefinitionInput;
  streamConcurrency: number;
  tables: string[];
}

const CASES: KillCase[] = [
  {
    what: "one stream after another",
    input: {
      kind: "export",
      name: "kill-test",
      resources: ["participants", "email_messages", "segments"],
      studies: ["study_1", "study_2"],
      emails: { backfillDays: 60 },
      pageSize: 5,
    },
    streamConcurrency: 1,
    tables: ["participants", "email_messages", "segments"],
  },
  {
    // A kill lands while other streams' pages and commits are under way.
    what: "four streams paged at once (three studies, two property groups, the email window, the segments)",
    input: {
      kind: "export",
      name: "kill-streams-test",
      resources: ["participants", "email_messages", "segments", "person_properties"],
      studies: ["study_1", "study_2", "study_3"],
      propertyGroups: ["property_group_1", "property_group_2"],
      emails: { backfillDays: 60 },
      pageSize: 5,
    },
    streamConcurrency: 4,
    tables: ["participants", "email_messages", "segments", "person_properties"],
  },
];

/**
 * Runs the export in a child process and SIGKILLs it once it has reported
 * `killAfter` checkpoints — wherever it is then: between pages, or inside the
 * next commit. Resolves with the number of checkpoints it reported.
 */
function runAndKill(
  c: KillCase,
  emu: TestEmulator,
  warehouse: string,
  now: Date,
  killAfter: number,
  rows: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
      env: {
        ...process.env,
        EXPORT_BASE_URL: emu.baseUrl,
        EXPORT_TOKEN: emu.token,
        EXPORT_WAREHOUSE: warehouse,
        EXPORT_NOW: now.toISOString(),
        EXPORT_DEFINITION: JSON.stringify(c.input),
        EXPORT_CHECKPOINT_ROWS: String(rows),
        EXPORT_STREAM_CONCURRENCY: String(c.streamConcurrency),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let seen = 0;
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.startsWith("checkpoint") && ++seen === killAfter) child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL") resolve(seen);
      else
        reject(
          new Error(`the export finished (${code}) before checkpoint ${killAfter}: ${stderr.slice(-500)}`),
        );
    });
  });
}

describe.each(CASES.flatMap((c) => (["duckdb", "postgres"] as SinkKind[]).map((kind) => ({ ...c, kind }))))(
  "an export process killed with SIGKILL, $what ($kind)",
  (c) => {
    let emu: TestEmulator;
    let now: Date;
    beforeAll(async () => {
      emu = await startTestEmulator({
        sizes: { participantsPerStudy: 30, emailMessages: 120, segments: 20 },
      });
      now = new Date(((await (await emu.admin("/clock")).json()) as { now: string }).now);
    });
    afterAll(async () => emu.close());

    it("is finished by the next run with the tables of a run never killed", async () => {
      const warehouses: TestWarehouse[] = [];
      const open: Sink[] = [];
      try {
        const reference = await testWarehouse(c.kind);
        const killed = await testWarehouse(c.kind);
        warehouses.push(reference, killed);
        const run = (sink: Sink) =>
          runExport({
            definition: definition(c.input),
            client: emu.client,
            sink,
            now: () => now,
            checkpointRows: 7,
            streamConcurrency: c.streamConcurrency,
          });

        const ref = await reference.open();
        open.push(ref);
        expect((await run(ref)).status).toBe("succeeded");

        expect(await runAndKill(c, emu, killed.url, now, 3, 1)).toBe(3);
        expect(await runAndKill(c, emu, killed.url, now, 9, 4)).toBe(9);
        const sink = await killed.open();
        open.push(sink);
        expect((await run(sink)).status).toBe("succeeded");

        for (const t of c.tables) {
          expect(comparable(await sink.readTable(t))).toEqual(comparable(await ref.readTable(t)));
        }
        const statuses = (await sink.readRuns()).map((r) => r.status);
        expect(statuses).not.toContain("running");
        expect(statuses).toContain("interrupted");
      } finally {
        for (const s of open) await s.close();
        for (const w of warehouses) await w.cleanup();
      }
    });
  },
);

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

const INPUT: ExportJobDefinitionInput = {
  kind: "export",
  name: "kill-streams-test",
  resources: ["participants", "email_messages", "segments", "person_properties"],
  studies: ["study_1", "study_2", "study_3"],
  propertyGroups: ["property_group_1", "property_group_2"],
  emails: { backfillDays: 60 },
  pageSize: 5,
};
/** Streams paged at once: three studies, two property groups, the email window and the segments. */
const STREAMS = 4;
const TABLES = ["participants", "email_messages", "segments", "person_properties"];

/**
 * Runs the export in a child process and SIGKILLs it once it has reported
 * `killAfter` checkpoints — wherever it is then: between pages, or inside the
 * next commit. Resolves with the number of checkpoints it reported.
 */
function runAndKill(
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
        EXPORT_DEFINITION: JSON.stringify(INPUT),
        EXPORT_CHECKPOINT_ROWS: String(rows),
        EXPORT_STREAM_CONCURRENCY: String(STREAMS),
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

/**
 * The same as process-kill.test.ts with several streams paged at once: a kill
 * lands while other streams' pages and commits are under way, and the next
 * run still ends with the tables of a run never killed.
 */
describe.each<SinkKind>(["duckdb", "postgres"])(
  "an export paging %s streams at once, killed with SIGKILL",
  (kind) => {
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
        const reference = await testWarehouse(kind);
        const killed = await testWarehouse(kind);
        warehouses.push(reference, killed);
        const run = (sink: Sink) =>
          runExport({
            definition: definition(INPUT),
            client: emu.client,
            sink,
            now: () => now,
            checkpointRows: 7,
            streamConcurrency: STREAMS,
          });

        const ref = await reference.open();
        open.push(ref);
        expect((await run(ref)).status).toBe("succeeded");

        expect(await runAndKill(emu, killed.url, now, 3, 1)).toBe(3);
        expect(await runAndKill(emu, killed.url, now, 9, 4)).toBe(9);
        const sink = await killed.open();
        open.push(sink);
        expect((await run(sink)).status).toBe("succeeded");

        for (const t of TABLES) {
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

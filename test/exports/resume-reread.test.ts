import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ExportJobDefinitionInput } from "../../src/config/export-job.ts";
import type { Snapshot } from "../../src/emulator/index.ts";
import { type RunExportOptions, runExport } from "../../src/exports/index.ts";
import type { Sink } from "../../src/sinks/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { definition, type SinkKind, settled, type TestWarehouse, testWarehouse } from "./export-fixture.ts";

/**
 * An export of two studies' participants, its process frozen inside a commit
 * of the second study and killed there, then run again: the second run goes
 * on from the committed cursor, keeps the first study's finished pass, and
 * re-reads only what was in flight at the kill.
 */
const CHILD = new URL("./fixtures/export-child.ts", import.meta.url).pathname;
const PER_STUDY = 2000;
const PAGE_SIZE = 20;
const CHECKPOINT_ROWS = 200;
const PAGES_PER_COMMIT = CHECKPOINT_ROWS / PAGE_SIZE;
/** The second study's checkpoint that freezes: the ones before it are committed. */
const FREEZE_AT = 3;
/** Participants the service drops after the first export, per study: the pass must mark them deleted. */
const DROPPED = 30;

const INPUT: ExportJobDefinitionInput = {
  kind: "export",
  name: "resume-test",
  resources: ["participants"],
  studies: ["study_1", "study_2"],
  pageSize: PAGE_SIZE,
};

function pages(rows: number): number {
  return Math.ceil(rows / PAGE_SIZE);
}

async function participantRequests(emu: TestEmulator): Promise<number> {
  const counts = await emu.requests();
  return Object.values(counts.byRoute.searchParticipants ?? {}).reduce((a, b) => a + b, 0);
}

/**
 * Runs the export in a child process that freezes in the second study's
 * FREEZE_AT-th commit, and SIGKILLs it there — once the service has answered
 * `reads` participant pages to it, when given: the stream goes on reading
 * while the frozen commit is pending, so that is the most a kill can lose.
 */
function runFreezeAndKill(emu: TestEmulator, warehouse: string, now: Date, reads?: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
      env: {
        ...process.env,
        EXPORT_BASE_URL: emu.baseUrl,
        EXPORT_TOKEN: emu.token,
        EXPORT_WAREHOUSE: warehouse,
        EXPORT_NOW: now.toISOString(),
        EXPORT_DEFINITION: JSON.stringify(INPUT),
        EXPORT_CHECKPOINT_ROWS: String(CHECKPOINT_ROWS),
        EXPORT_HANG_STREAM: "participants:study=study_2",
        EXPORT_HANG_AT: String(FREEZE_AT),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const start = participantRequests(emu);
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (!line.startsWith("hung")) return;
      void (async () => {
        const from = await start;
        while (reads !== undefined && (await participantRequests(emu)) - from < reads) {
          await new Promise((r) => setTimeout(r, 10));
        }
        child.kill("SIGKILL");
      })().catch(reject);
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL") resolve();
      else reject(new Error(`the export ended (${code}) without freezing: ${stderr.slice(-500)}`));
    });
  });
}

describe.each<SinkKind>(["duckdb", "postgres"])("a killed participants export run again (%s)", (kind) => {
  let emu: TestEmulator;
  let now: Date;
  let changed: Snapshot;
  let warehouse: TestWarehouse;
  let sink: Sink | undefined;

  beforeAll(async () => {
    emu = await startTestEmulator({ sizes: { people: PER_STUDY, participantsPerStudy: PER_STUDY } });
    now = new Date(((await (await emu.admin("/clock")).json()) as { now: string }).now);
    const base = await emu.snapshot();
    const dropped = new Set(
      ["study_1", "study_2"].flatMap((s) =>
        base.participants
          .filter((p) => p.studyId === s)
          .map((p) => p.participantId)
          .slice(100, 100 + DROPPED),
      ),
    );
    changed = { ...base, participants: base.participants.filter((p) => !dropped.has(p.participantId)) };
  });
  afterAll(async () => emu.close());

  beforeEach(async () => {
    warehouse = await testWarehouse(kind);
  });
  afterEach(async () => {
    await sink?.close();
    sink = undefined;
    await warehouse.cleanup();
  });

  function run(s: Sink, extra: Partial<RunExportOptions> = {}) {
    return settled(
      runExport({ definition: definition(INPUT), client: emu.client, sink: s, now: () => now, ...extra }),
    );
  }

  /** A first export of the full studies, then the service drops some participants. */
  async function exportedThenChanged(): Promise<void> {
    const res = await emu.admin("/snapshot", { method: "PUT", body: changed });
    expect(res.ok).toBe(true);
  }

  it("reads only the pages after the committed cursor, and ends equal to the service", async () => {
    const base = await emu.snapshot();
    const firstSink = await warehouse.open();
    expect((await run(firstSink)).status).toBe("succeeded");
    await firstSink.close();
    try {
      await exportedThenChanged();
      const live = (s: string) => changed.participants.filter((p) => p.studyId === s);
      const study1Pages = pages(live("study_1").length);
      const study2Pages = pages(live("study_2").length);

      // Study 1, the committed pages of study 2, the frozen commit's, those gathered for the next, one ahead.
      const committedPages = (FREEZE_AT - 1) * PAGES_PER_COMMIT;
      const inFlight = 2 * PAGES_PER_COMMIT + 1;
      const r0 = await participantRequests(emu);
      await runFreezeAndKill(emu, warehouse.url, now, study1Pages + committedPages + inFlight);
      const killedReads = (await participantRequests(emu)) - r0;
      // The whole of study 1, then study 2 up to the frozen commit.
      expect(killedReads).toBeGreaterThan(study1Pages);

      sink = await warehouse.open();
      const r1 = await participantRequests(emu);
      const report = await run(sink);
      expect(report.status).toBe("succeeded");
      const rerunReads = (await participantRequests(emu)) - r1;

      // Study 1's pass was finished by the killed run: kept. Study 2 goes on after its last commit.
      expect(rerunReads).toBe(study2Pages - committedPages);
      expect(report.resources.participants?.passesKept).toBe(1);

      // Read twice: what was in flight at the kill, no more.
      expect(killedReads - study1Pages + rerunReads - study2Pages).toBe(inFlight);

      // The warehouse holds the service: every participant live, the dropped ones marked deleted.
      const rows = await sink.readTable("participants");
      for (const s of ["study_1", "study_2"]) {
        const inStudy = rows.filter((r) => r.study_id === s);
        const liveIds = inStudy.filter((r) => r._deleted_at === null).map((r) => String(r.participant_id));
        const deletedIds = inStudy.filter((r) => r._deleted_at !== null).map((r) => String(r.participant_id));
        const want = new Set(live(s).map((p) => p.participantId));
        expect(liveIds.sort()).toEqual([...want].sort());
        const gone = base.participants
          .filter((p) => p.studyId === s && !want.has(p.participantId))
          .map((p) => p.participantId);
        expect(gone).toHaveLength(DROPPED);
        expect(deletedIds.sort()).toEqual(gone.sort());
      }

      // Once an export has finished, the next run is a new export: it reads every page again.
      const r2 = await participantRequests(emu);
      const next = await run(sink);
      expect(next.status).toBe("succeeded");
      expect(next.resources.participants?.passesKept).toBeUndefined();
      expect((await participantRequests(emu)) - r2).toBe(study1Pages + study2Pages);
    } finally {
      const res = await emu.admin("/snapshot", { method: "PUT", body: base });
      expect(res.ok).toBe(true);
    }
  });

  it("reads a finished pass again when the killed run is older than resumeWithinMs", async () => {
    const first = await warehouse.open();
    expect((await run(first)).status).toBe("succeeded");
    await first.close();
    await runFreezeAndKill(emu, warehouse.url, now);
    sink = await warehouse.open();
    const r1 = await participantRequests(emu);
    const later = new Date(now.getTime() + 7 * 60 * 60 * 1000);
    const report = await run(sink, { now: () => later });
    expect(report.status).toBe("succeeded");
    expect(report.resources.participants?.passesKept).toBeUndefined();
    const committedPages = (FREEZE_AT - 1) * PAGES_PER_COMMIT;
    expect((await participantRequests(emu)) - r1).toBe(2 * pages(PER_STUDY) - committedPages);
  });
});

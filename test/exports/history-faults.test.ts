import { spawn } from "node:child_process";
import { type FSWatcher, readdirSync, watch } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExportJobDefinitionInput } from "../../src/config/export-job.ts";
import { runExport } from "../../src/exports/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import {
  definition,
  type SinkKind,
  settled,
  type TestWarehouse,
  testWarehouse,
  withCommit,
} from "./export-fixture.ts";
import {
  editParticipants,
  expectWellFormed,
  exportOnce,
  historyRows,
  queryWarehouse,
} from "./history-fixture.ts";

const CHILD = new URL("./fixtures/export-child.ts", import.meta.url).pathname;

const JOB: Omit<ExportJobDefinitionInput, "kind"> = {
  name: "history-faults",
  resources: ["participants", "person_properties"],
  studies: ["study_1", "study_2"],
  propertyGroups: ["property_group_1"],
  pageSize: 3,
  history: true,
};

/** A history without what differs between two correct runs: when, and by which run. */
function comparableHistory(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map(({ valid_from, valid_to, opened_by_run, closed_by_run, ...rest }) => rest);
}

function byParticipant(rows: Record<string, unknown>[]): Map<unknown, Record<string, unknown>[]> {
  const out = new Map<unknown, Record<string, unknown>[]>();
  for (const r of rows) out.set(r.participant_id, [...(out.get(r.participant_id) ?? []), r]);
  return out;
}

/**
 * Runs JOB in a child process and SIGKILLs it once it has reported
 * `killAfter` checkpoints. With `partsOf` (a file warehouse's directory) the
 * kill waits from then on for the child to create a part file in one of the
 * warehouse's run directories: inside a commit, once its parts are being
 * written and before the manifest lists them; or at the next checkpoint,
 * should none come first. Resolves with the checkpoints reported.
 */
function runAndKill(
  emu: TestEmulator,
  warehouse: string,
  killAfter: number,
  partsOf?: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
      env: {
        ...process.env,
        EXPORT_BASE_URL: emu.baseUrl,
        EXPORT_TOKEN: emu.token,
        EXPORT_WAREHOUSE: warehouse,
        EXPORT_DEFINITION: JSON.stringify({ kind: "export", ...JOB }),
        EXPORT_CHECKPOINT_ROWS: "2",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let seen = 0;
    let stderr = "";
    const watchers: FSWatcher[] = [];
    const kill = () => child.kill("SIGKILL");
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (!line.startsWith("checkpoint")) return;
      if (++seen > killAfter || (seen === killAfter && partsOf === undefined)) kill();
      else if (seen === killAfter && partsOf !== undefined) {
        for (const runDir of runDirs(partsOf)) {
          watchers.push(watch(runDir, (_event, file) => /\.(ndjson|csv)$/.test(String(file)) && kill()));
        }
      }
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      for (const w of watchers) w.close();
      if (signal === "SIGKILL") resolve(seen);
      else
        reject(
          new Error(`the export finished (${code}) before checkpoint ${killAfter}: ${stderr.slice(-500)}`),
        );
    });
  });
}

/** The `<table>/date=<day>/run=<run>` directories of a file warehouse, where its commits write their parts. */
function runDirs(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name.startsWith("run="))
    .map((e) => join(e.parentPath, e.name));
}

async function statusesOf(emu: TestEmulator): Promise<Map<unknown, string | undefined>> {
  const snap = (await (await emu.admin("/snapshot")).json()) as {
    participants: { participantId: string; status?: string }[];
  };
  return new Map(snap.participants.map((p) => [p.participantId, p.status]));
}

/** Every participant of study_1 and study_2 moves to `status`; one of study_2 leaves. */
async function changeEveryone(emu: TestEmulator, status: string, leaving: string): Promise<void> {
  await editParticipants(emu, (ps) =>
    ps
      .filter((p) => p.participantId !== leaving)
      .map((p) => (p.studyId === "study_1" || p.studyId === "study_2" ? { ...p, status } : p)),
  );
}

/**
 * Every kind of warehouse that keeps history. A file warehouse (`file:<dir>`)
 * is an append-only log of parts and a manifest, so a kill can leave parts
 * the manifest does not list, or a torn last manifest line.
 */
const KINDS: SinkKind[] = ["duckdb", "postgres", "file"];

describe.each(KINDS)("history through faults (%s)", (kind) => {
  let emu: TestEmulator;
  const warehouses: TestWarehouse[] = [];
  const newWarehouse = async () => {
    const w = await testWarehouse(kind);
    warehouses.push(w);
    return w;
  };
  let leaving: string;

  beforeAll(async () => {
    emu = await startTestEmulator({ sizes: { participantsPerStudy: 8, properties: 8 } });
    const snap = (await (await emu.admin("/snapshot")).json()) as {
      participants: { participantId: string; studyId: string }[];
    };
    leaving = snap.participants.find((p) => p.studyId === "study_2")?.participantId as string;
  });
  afterAll(async () => {
    await emu?.close();
    for (const w of warehouses) await w.cleanup();
  });

  it("a kill mid-export followed by a resume gives the same history as a run never killed", async () => {
    await emu.admin("/reset", { method: "POST" });
    const reference = await newWarehouse();
    const killed = await newWarehouse();
    await exportOnce(emu, reference, JOB);
    await exportOnce(emu, killed, JOB);
    await changeEveryone(emu, "SCHEDULED", leaving);

    await exportOnce(emu, reference, JOB);
    // Killed twice, at different points of the pass (between pages, or inside a commit), then resumed.
    expect(await runAndKill(emu, killed.url, 3)).toBe(3);
    if (kind === "file") {
      // A file warehouse's second kill lands inside a commit (at checkpoint 2 at the latest): as it
      // writes its parts, before the manifest lists them, so the resume finds parts it must ignore.
      const dir = killed.url.slice("file:".length);
      expect([1, 2]).toContain(await runAndKill(emu, killed.url, 1, dir));
    } else expect(await runAndKill(emu, killed.url, 2)).toBe(2);
    await exportOnce(emu, killed, JOB);

    for (const [table, key] of [
      ["participants_history", "participant_id"],
      ["person_properties_history", "property_id"],
    ] as const) {
      const got = await historyRows(kind, killed.url, table, key);
      expectWellFormed(got, key);
      expect(comparableHistory(got)).toEqual(
        comparableHistory(await historyRows(kind, reference.url, table, key)),
      );
    }
    const gone = (await historyRows(kind, killed.url, "participants_history", "participant_id")).filter(
      (r) => r.participant_id === leaving,
    );
    expect(gone.map((r) => r.is_current)).toEqual([false]);
  });

  it("a failed export resumed by the next run leaves no duplicate version and no gap", async () => {
    await emu.admin("/reset", { method: "POST" });
    const w = await newWarehouse();
    await exportOnce(emu, w, JOB);
    const before = await statusesOf(emu);
    await changeEveryone(emu, "COMPLETED", leaving);
    // The run dies on its fourth commit, after some pages of the new state were committed.
    const sink = await w.open();
    try {
      let commits = 0;
      const failing = withCommit(sink, (c) =>
        ++commits === 4 ? Promise.reject(new Error("warehouse went away")) : sink.commit(c),
      );
      const report = await settled(
        runExport({ definition: definition(JOB), client: emu.client, sink: failing, checkpointRows: 2 }),
      );
      expect(report.status).toBe("failed");
    } finally {
      await sink.close();
    }
    await exportOnce(emu, w, JOB);
    await exportOnce(emu, w, JOB);
    const rows = await historyRows(kind, w.url, "participants_history", "participant_id");
    expectWellFormed(rows, "participant_id");
    const byId = byParticipant(rows);
    for (const [id, versions] of byId) {
      if (id === leaving) expect(versions.map((v) => v.is_current)).toEqual([false]);
      else {
        expect(versions.map((v) => v.status).at(-1)).toBe("COMPLETED");
        if (before.get(id) === "COMPLETED") expect(versions.map((v) => v.is_current)).toEqual([true]);
        else {
          expect(versions.map((v) => v.is_current)).toEqual([false, true]);
          expect(versions[0]?.valid_to).toBe(versions[1]?.valid_from);
        }
      }
    }
  });

  // SQL warehouses only: it checks the history against `participants`' _deleted_at, which a file
  // warehouse never sets (its full refreshes are snapshots, soft deletes left to readers).
  const sqlOnly = it.skipIf(kind === "file");
  sqlOnly("two exports of the same stream at once leave one version per state", async () => {
    await emu.admin("/reset", { method: "POST" });
    const w = await newWarehouse();
    await exportOnce(emu, w, JOB);
    await changeEveryone(emu, "APPROVED", leaving);
    // Two sinks, as two workers would have, committing the same participants in turn.
    const [a, b] = [await w.open(), kind === "postgres" ? await w.open() : undefined];
    try {
      const run = (sink: typeof a, name: string) =>
        settled(
          runExport({
            definition: definition({ ...JOB, name }),
            client: emu.client,
            sink,
            checkpointRows: 2,
          }),
        );
      const reports = await Promise.all([run(a, "first"), run(b ?? a, "second")]);
      expect(reports.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    } finally {
      await a.close();
      await b?.close();
    }
    const rows = await historyRows(kind, w.url, "participants_history", "participant_id");
    expectWellFormed(rows, "participant_id");
    // The history agrees with the table: a live row has one current version in its state, a row marked deleted none.
    const live = await queryWarehouse(
      kind,
      w.url,
      "SELECT participant_id, status, _deleted_at IS NULL AS live FROM participants ORDER BY participant_id",
    );
    for (const row of live) {
      const current = rows.filter((r) => r.participant_id === row.participant_id && r.is_current);
      expect(current.map((c) => c.status)).toEqual(row.live ? [row.status] : []);
    }
    for (const versions of byParticipant(rows).values()) {
      const id = versions[0]?.participant_id;
      if (id === leaving) continue;
      expect(versions.map((v) => v.status).at(-1)).toBe("APPROVED");
      // One version per state: the states of consecutive versions differ.
      versions.slice(1).forEach((v, i) => {
        if (v.valid_from === versions[i]?.valid_to) expect(v.row_hash).not.toBe(versions[i]?.row_hash);
      });
    }
  });
});

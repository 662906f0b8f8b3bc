import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExportResource } from "../../src/config/export-job.ts";
import type { Snapshot } from "../../src/emulator/index.ts";
import { type RunExportOptions, runExport } from "../../src/exports/index.ts";
import type { Sink } from "../../src/sinks/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import {
  comparable,
  definition,
  type SinkKind,
  settled,
  type TestWarehouse,
  testWarehouse,
  withCommit,
} from "./export-fixture.ts";

const TABLES: ExportResource[] = [
  "participants",
  "email_messages",
  "incentives",
  "custom_incentives",
  "segments",
  "person_properties",
];

const DEFINITION = definition({
  studies: ["study_1", "study_2", "study_3"],
  propertyGroups: ["property_group_1", "property_group_2", "property_group_3"],
  incentives: { ids: Array.from({ length: 40 }, (_, i) => `incentive_${i + 1}`) },
  emails: { backfillDays: 60, lookbackHours: 24 },
  pageSize: 7,
});

/** A sink that dies on its n-th commit, before anything reaches the database. */
function crashingOnCommit(sink: Sink, n: number): Sink {
  let commits = 0;
  return withCommit(sink, (c) => {
    if (++commits === n) return Promise.reject(new Error("process died"));
    return sink.commit(c);
  });
}

async function tables(sink: Sink): Promise<Record<string, Record<string, unknown>[]>> {
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const t of TABLES) out[t] = comparable(await sink.readTable(t));
  return out;
}

describe.each<SinkKind>(["duckdb", "postgres"])("a killed export started again (%s)", (kind) => {
  let emu: TestEmulator;
  let now: Date;
  let changed: Snapshot;

  beforeAll(async () => {
    emu = await startTestEmulator({ sizes: { participantsPerStudy: 40, emailMessages: 250, segments: 30 } });
    now = new Date(((await (await emu.admin("/clock")).json()) as { now: string }).now);
    // What the service looks like after the baseline run: some participants and a segment gone, a message added.
    const base = await emu.snapshot();
    const dropped = new Set(
      base.participants
        .filter((p) => p.studyId === "study_2")
        .map((p) => p.participantId)
        .slice(0, 6),
    );
    const template = base.emailMessages[0]!;
    changed = {
      ...base,
      participants: base.participants.filter((p) => !dropped.has(p.participantId)),
      segments: base.segments.slice(2),
      emailMessages: [
        ...base.emailMessages,
        { ...template, id: "email_fresh", sentAt: new Date(now.getTime() - 60_000).toISOString() },
      ],
    };
  });
  afterAll(async () => emu.close());

  async function putSnapshot(snap: Snapshot): Promise<void> {
    const res = await emu.admin("/snapshot", { method: "PUT", body: snap });
    expect(res.ok).toBe(true);
  }

  function run(sink: Sink, extra: Partial<RunExportOptions> = {}) {
    return settled(runExport({ definition: DEFINITION, client: emu.client, sink, now: () => now, ...extra }));
  }

  it("ends with the same tables as a run that was never interrupted", async () => {
    const warehouses: TestWarehouse[] = [];
    const sinks: Sink[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const w = await testWarehouse(kind);
        warehouses.push(w);
        sinks.push(await w.open());
      }
      const [reference, killed] = sinks as [Sink, Sink];
      const baseline = await emu.snapshot();

      // Both warehouses start from the same earlier export.
      for (const s of sinks) expect((await run(s)).status).toBe("succeeded");
      await putSnapshot(changed);

      const clean = await run(reference);
      expect(clean.status).toBe("succeeded");
      expect(clean.resources.participants?.deleted).toBe(6);

      // 1. Stopped between two checkpoints, in the middle of the participants.
      const abort = new AbortController();
      const r1 = await run(killed, {
        checkpointRows: 1,
        signal: abort.signal,
        onCheckpoint: ({ pages }) => {
          if (pages === 4) abort.abort(new Error("SIGTERM"));
        },
      });
      expect(r1.status).toBe("interrupted");
      expect(r1.resources.participants?.status).toBe("interrupted");

      // 2. Dies inside a commit, later on: that resource fails, the others carry on.
      const r2 = await run(crashingOnCommit(killed, 12), { checkpointRows: 10 });
      expect(r2.status).toBe("failed");

      // 3. The service fails on the first page of emails, then on the third page of segments.
      const faulted = new Set<string>();
      // It reads every pass again (resumeWithinMs 0) instead of keeping those run 2 finished, so it meets both faults.
      const r3 = await run(killed, {
        checkpointRows: 1,
        resumeWithinMs: 0,
        onCheckpoint: async ({ resource, pages }) => {
          // Commits run one behind the pages, so "from the second page on", once.
          if (resource === "participants" && pages >= 2 && !faulted.has("searchEmails")) {
            faulted.add("searchEmails");
            await emu.admin("/faults", { body: { route: "searchEmails", errorRate: 1, count: 1 } });
          }
          if (resource === "segments" && pages >= 2 && !faulted.has("searchSegments")) {
            faulted.add("searchSegments");
            await emu.admin("/faults", { body: { route: "searchSegments", errorRate: 1, count: 1 } });
          }
        },
      });
      await emu.admin("/faults", { method: "DELETE" });
      expect(r3.resources.email_messages?.status).toBe("failed");
      expect(r3.resources.segments?.status).toBe("failed");

      // 4. Killed right at the start of incentives.
      const abort2 = new AbortController();
      await run(killed, {
        checkpointRows: 3,
        signal: abort2.signal,
        onCheckpoint: ({ resource }) => {
          if (resource === "incentives") abort2.abort(new Error("SIGKILL"));
        },
      });

      const final = await run(killed);
      expect(final.status, JSON.stringify(final.resources)).toBe("succeeded");

      expect(await tables(killed)).toEqual(await tables(reference));
      const runs = await killed.readRuns();
      expect(new Set(runs.map((r) => r.status))).toEqual(new Set(["succeeded", "interrupted", "failed"]));
      expect(runs.filter((r) => r.status === "running")).toEqual([]);
      await putSnapshot(baseline);
    } finally {
      for (const s of sinks) await s.close();
      for (const w of warehouses) await w.cleanup();
    }
  });
});

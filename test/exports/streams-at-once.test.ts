import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RecruitSyncError } from "../../src/errors/index.ts";
import { type RunExportOptions, RunReport, runExport } from "../../src/exports/index.ts";
import type { Sink } from "../../src/sinks/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { definition, type SinkKind, settled, type TestWarehouse, testWarehouse } from "./export-fixture.ts";

/**
 * One job over four studies, their participants paged at once (four
 * streams, one cursor each, one sink). A commit of one stream fails: the
 * other streams finish, and the next run reads only that stream's pages
 * after its last commit — none skipped, none read twice but the ones whose
 * commit failed — and ends with every participant once.
 */
const STUDIES = ["study_1", "study_2", "study_3", "study_4"];
const PER_STUDY = 60;
const PAGE_SIZE = 5;
const PAGES = PER_STUDY / PAGE_SIZE;
const CHECKPOINT_ROWS = 10;
const PAGES_PER_COMMIT = CHECKPOINT_ROWS / PAGE_SIZE;
const FAILING_STREAM = "participants:study=study_3";
/** The failing stream's commit that fails: the ones before it are committed. */
const FAIL_AT = 3;

const INPUT = {
  name: "streams-at-once",
  resources: ["participants" as const],
  studies: STUDIES,
  pageSize: PAGE_SIZE,
};

/** A sink whose `at`-th commit of `stream` fails before anything reaches the database. */
function failingStream(inner: Sink, stream: string, at: number): Sink {
  let seen = 0;
  return {
    kind: inner.kind,
    displayUrl: inner.displayUrl,
    prepare: (t) => inner.prepare(t),
    readState: (s) => inner.readState(s),
    readKeys: (q) => inner.readKeys(q),
    readTable: (t) => inner.readTable(t),
    readRuns: () => inner.readRuns(),
    close: () => inner.close(),
    commit(c) {
      if (c.state?.stream === stream && ++seen === at) return Promise.reject(new Error("disk full"));
      return inner.commit(c);
    },
  };
}

describe.each<SinkKind>(["duckdb", "postgres"])("several streams paged at once (%s)", (kind) => {
  let emu: TestEmulator;
  let now: Date;
  let warehouse: TestWarehouse;
  let sink: Sink;

  beforeAll(async () => {
    emu = await startTestEmulator({ sizes: { participantsPerStudy: PER_STUDY } });
    now = new Date(((await (await emu.admin("/clock")).json()) as { now: string }).now);
  });
  afterAll(async () => emu.close());
  beforeEach(async () => {
    warehouse = await testWarehouse(kind);
    sink = await warehouse.open();
  });
  afterEach(async () => {
    await sink.close();
    await warehouse.cleanup();
  });

  function run(s: Sink, extra: Partial<RunExportOptions> = {}) {
    return settled(
      runExport({
        definition: definition(INPUT),
        client: emu.client,
        sink: s,
        now: () => now,
        checkpointRows: CHECKPOINT_ROWS,
        streamConcurrency: STUDIES.length,
        ...extra,
      }),
    );
  }

  async function participantRequests(): Promise<number> {
    const counts = await emu.requests();
    return Object.values(counts.byRoute.searchParticipants ?? {}).reduce((a, b) => a + b, 0);
  }

  it("resumes exactly after a failure in one stream, the others finished", async () => {
    const order: string[] = [];
    const r0 = await participantRequests();
    const first = await run(failingStream(sink, FAILING_STREAM, FAIL_AT), {
      onCheckpoint: ({ stream }) => {
        order.push(stream);
      },
    });
    expect(first.status).toBe("failed");
    expect(first.resources.participants?.error).toContain("disk full");
    // Paged at once: another study committed before study_1's last commit.
    const lastOfStudy1 = order.lastIndexOf("participants:study=study_1");
    expect(order.slice(0, lastOfStudy1).some((s) => s !== "participants:study=study_1")).toBe(true);
    // The other three streams ran to their end despite the failure.
    for (const s of ["study_1", "study_2", "study_4"]) {
      expect(order.filter((o) => o === `participants:study=${s}`)).toHaveLength(PAGES / PAGES_PER_COMMIT);
    }
    const firstReads = (await participantRequests()) - r0;

    const r1 = await participantRequests();
    const second = await run(sink);
    expect(second.status).toBe("succeeded");
    const rerunReads = (await participantRequests()) - r1;
    // The finished studies are kept; study_3 goes on after its last commit.
    expect(second.resources.participants?.passesKept).toBe(3);
    const committedPages = (FAIL_AT - 1) * PAGES_PER_COMMIT;
    expect(rerunReads).toBe(PAGES - committedPages);
    // Read twice: at most the failed commit's pages, the pages gathered after it and the one fetched ahead.
    expect(firstReads + rerunReads - STUDIES.length * PAGES).toBeLessThanOrEqual(2 * PAGES_PER_COMMIT + 1);

    const rows = await sink.readTable("participants");
    const ids = rows.map((r) => String(r.participant_id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(rows.filter((r) => r._deleted_at !== null)).toEqual([]);
    const snap = await emu.snapshot();
    const want = snap.participants.filter((p) => STUDIES.includes(p.studyId)).map((p) => p.participantId);
    expect(want).toHaveLength(STUDIES.length * PER_STUDY);
    expect([...ids].sort()).toEqual([...want].sort());
    const runs = await sink.readRuns();
    expect(runs.filter((r) => r.status === "running")).toEqual([]);
  });

  it("ends with the same tables as streams paged one after another", async () => {
    const other = await testWarehouse(kind);
    const one = await other.open();
    try {
      expect((await run(one, { streamConcurrency: 1 })).status).toBe("succeeded");
      expect((await run(sink)).status).toBe("succeeded");
      const strip = (rows: Record<string, unknown>[]) => rows.map(({ _synced_at, _run_id, ...rest }) => rest);
      expect(strip(await sink.readTable("participants"))).toEqual(strip(await one.readTable("participants")));
    } finally {
      await one.close();
      await other.cleanup();
    }
  });

  it("cuts the streams under way short when one meets a failure that stops the run, and resumes them", async () => {
    // The rate budget paused at the 20th request, as the queue's governor does: every stream would wait the same.
    let requests = 0;
    const pausing = emu.clientFor({
      beforeRequest: async () => {
        if (++requests === 20) throw new RecruitSyncError("budget_paused", "rate budget paused for 60 s");
      },
    });
    const input = { ...INPUT, resources: ["participants" as const, "segments" as const] };
    const err = await runExport({
      definition: definition(input),
      client: pausing,
      sink,
      now: () => now,
      checkpointRows: CHECKPOINT_ROWS,
      streamConcurrency: STUDIES.length,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RecruitSyncError);
    expect((err as RecruitSyncError).code).toBe("budget_paused");
    const report = RunReport.parse((err as RecruitSyncError).report);
    expect(report.resources.participants).toMatchObject({ status: "failed", errorCode: "budget_paused" });
    // Segments waited for a slot behind the four studies: never started.
    expect(Object.keys(report.resources)).toEqual(["participants"]);
    // No more requests than the one refused and those already on their way.
    expect(requests).toBeLessThanOrEqual(20 + STUDIES.length);
    const stored = (await sink.readTable("participants")).length;
    expect(stored).toBeLessThan(STUDIES.length * PER_STUDY);
    expect((await sink.readRuns()).filter((r) => r.status === "running")).toEqual([]);

    const again = await settled(
      runExport({
        definition: definition(input),
        client: emu.client,
        sink,
        now: () => now,
        checkpointRows: CHECKPOINT_ROWS,
        streamConcurrency: STUDIES.length,
      }),
    );
    expect(again.status).toBe("succeeded");
    const ids = (await sink.readTable("participants")).map((r) => String(r.participant_id));
    expect(ids).toHaveLength(STUDIES.length * PER_STUDY);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("meets a refused token with one stream, not one per slot", async () => {
    const before = await emu.requests();
    const err = await runExport({
      definition: definition({
        resources: ["participants", "email_messages", "segments", "person_properties"],
        studies: ["study_1"],
        propertyGroups: ["property_group_1"],
      }),
      client: emu.clientFor({ token: "wrong-token" }),
      sink,
      streamConcurrency: 4,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RecruitSyncError);
    expect((err as RecruitSyncError).code).toBe("unauthorized");
    expect(Object.keys(RunReport.parse((err as RecruitSyncError).report).resources)).toEqual([
      "participants",
    ]);
    expect((await emu.requests()).total - before.total).toBe(1);
  });
});

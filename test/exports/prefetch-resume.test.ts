import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runExport } from "../../src/exports/index.ts";
import type { Sink } from "../../src/sinks/index.ts";
import { definition, type ExportFixture, exportFixture, settled, withCommit } from "./export-fixture.ts";

/**
 * Pages are fetched one ahead of the sink. A page fetched ahead is never
 * committed ahead: after a failure in the middle of a run, the next run
 * starts from the page after the last commit — no page read twice beyond the
 * one the failure cut off, none skipped, every participant once.
 */
const PER_STUDY = 60;
const PAGE_SIZE = 5;
const PAGES = PER_STUDY / PAGE_SIZE;

/** A sink that fails its n-th commit before anything reaches the database, and counts the others. */
function failingOnCommit(sink: Sink, n: number, seen: { commits: number }): Sink {
  return withCommit(sink, (c) => {
    if (++seen.commits === n) return Promise.reject(new Error("process died"));
    return sink.commit(c);
  });
}

describe("an export with pages fetched ahead, failing in the middle", () => {
  let fx: ExportFixture;
  const input = { resources: ["participants" as const], studies: ["study_1"], pageSize: PAGE_SIZE };

  beforeEach(async () => {
    fx = await exportFixture("duckdb", { sizes: { participantsPerStudy: PER_STUDY } });
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  async function participantRequests(): Promise<number> {
    const counts = await fx.emu.requests();
    return Object.values(counts.byRoute.searchParticipants ?? {}).reduce((a, b) => a + b, 0);
  }

  async function storedIds(): Promise<string[]> {
    return (await fx.sink.readTable("participants")).map((r) => String(r.participant_id));
  }

  /** A rerun reads exactly the pages after the last commit, and the table holds every participant once. */
  async function resumesExactly(): Promise<void> {
    const committed = (await storedIds()).length;
    expect(committed % PAGE_SIZE).toBe(0);
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThan(PER_STUDY);
    const before = await participantRequests();
    const report = await fx.run(input);
    expect(report.status).toBe("succeeded");
    expect(await participantRequests()).toBe(before + PAGES - committed / PAGE_SIZE);
    const ids = await storedIds();
    expect(new Set(ids).size).toBe(ids.length);
    const snap = await fx.emu.snapshot();
    const all = snap.participants.filter((p) => p.studyId === "study_1").map((p) => p.participantId);
    expect(all).toHaveLength(PER_STUDY);
    expect([...ids].sort()).toEqual([...all].sort());
  }

  it("resumes exactly after the service fails on a page fetched ahead", async () => {
    let armed = false;
    const report = await fx.run(input, {
      checkpointRows: PAGE_SIZE,
      onCheckpoint: async ({ pages }) => {
        // The next request fails: by now that is the page fetched ahead of this commit, or the one after.
        if (pages >= 4 && !armed) {
          armed = true;
          const res = await fx.emu.admin("/faults", {
            body: { route: "searchParticipants", errorRate: 1, count: 1 },
          });
          expect(res.ok).toBe(true);
        }
      },
    });
    await fx.emu.admin("/faults", { method: "DELETE" });
    expect(armed).toBe(true);
    expect(report.status).toBe("failed");
    expect((await fx.emu.requests()).byRoute.searchParticipants?.["500"]).toBe(1);
    await resumesExactly();
  });

  it("resumes exactly after a commit fails while the next page is on its way", async () => {
    const seen = { commits: 0 };
    // Commit 1 records the export, commit 2 marks the run; commits 3–6 hold four pages; the seventh fails.
    const report = await settled(
      runExport({
        definition: definition(input),
        client: fx.emu.client,
        sink: failingOnCommit(fx.sink, 7, seen),
        checkpointRows: PAGE_SIZE,
      }),
    );
    expect(report.status).toBe("failed");
    expect(await storedIds()).toHaveLength(4 * PAGE_SIZE);
    await resumesExactly();
  });
});

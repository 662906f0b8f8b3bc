import { describe, expect, it } from "vitest";
import { type RunModelInput, runModel } from "../../src/ops/console/run-model.ts";
import type { JobProgress } from "../../src/queue/index.ts";

const NOW = Date.parse("2025-03-01T12:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

/** An import sending: 1,000 rows read, 100 rejected, `imported` sent so far. */
function sending(imported: number, extra: Partial<JobProgress> = {}): JobProgress {
  return {
    kind: "import",
    phase: "send",
    bytesRead: 1000,
    bytesTotal: 1000,
    rowsRead: 1000,
    imported,
    rejected: 100,
    duplicates: 0,
    batches: imported / 100,
    batchesResumed: 0,
    requests: imported / 100,
    budgetWaitMs: 0,
    ...extra,
  } as JobProgress;
}

/** The projection of a running job's model: what the page says under "Should finish". */
function projectFinish(input: Omit<RunModelInput, "state" | "dryRun">) {
  const { projectedFinish, projectionBasis } = runModel({ ...input, state: "active", dryRun: false });
  return { projectedFinish, projectionBasis };
}

describe("the projected finish of a run", () => {
  it("is the people left at the pace so far", () => {
    // 300 people in 60 s: 600 left take 120 s more.
    const p = projectFinish({
      progress: sending(300),
      startedAt: NOW - 60_000,
      now: NOW,
      batchSize: 100,
      budget: { remaining: 50, resetAt: NOW + 30_000 },
    });
    expect(p.projectedFinish).toBe(iso(NOW + 120_000));
    expect(p.projectionBasis).toBe("600 people left at the pace so far");
  });

  it("leaves the time waited on the budget out of the pace", () => {
    // 60 s since the start, 30 of them waiting: 300 people in 30 s, 600 left take 60 s.
    const p = projectFinish({
      progress: sending(300, { budgetWaitMs: 30_000 }),
      startedAt: NOW - 60_000,
      now: NOW,
      batchSize: 100,
      budget: null,
    });
    expect(p.projectedFinish).toBe(iso(NOW + 60_000));
  });

  it("is past the budget's reset when the requests left exceed what the window has left", () => {
    // 6 requests left, 2 in this window: 200 people go now, 400 after the reset in 5 min.
    const p = projectFinish({
      progress: sending(300),
      startedAt: NOW - 60_000,
      now: NOW,
      batchSize: 100,
      budget: { remaining: 2, resetAt: NOW + 300_000 },
    });
    expect(p.projectedFinish).toBe(iso(NOW + 300_000 + 80_000));
    expect(p.projectionBasis).toContain("6 requests left, 2 left in this window");
  });

  it("starts from the end of a pause for the budget", () => {
    const p = projectFinish({
      progress: sending(300, { waitingUntil: iso(NOW + 45_000) }),
      startedAt: NOW - 60_000,
      now: NOW,
      batchSize: 100,
      budget: null,
    });
    expect(p.projectedFinish).toBe(iso(NOW + 45_000 + 120_000));
    expect(p.projectionBasis).toMatch(/^paused for the rate budget/);
  });

  it("says nothing yet while the file is read, before the first answer, or for an export", () => {
    const reading = projectFinish({
      progress: { ...sending(0), phase: "read", bytesRead: 10 } as JobProgress,
      startedAt: NOW - 1000,
      now: NOW,
      batchSize: 100,
      budget: null,
    });
    expect(reading).toEqual({ projectedFinish: null, projectionBasis: "projected once the file is read" });
    const first = projectFinish({
      progress: sending(0),
      startedAt: NOW - 1000,
      now: NOW,
      batchSize: 100,
      budget: null,
    });
    expect(first.projectedFinish).toBeNull();
    const notStarted = projectFinish({
      progress: null,
      startedAt: undefined,
      now: NOW,
      batchSize: 100,
      budget: null,
    });
    expect(notStarted.projectedFinish).toBeNull();
    const exporting = projectFinish({
      progress: { kind: "export", runId: "r", resource: null, resources: {}, budgetWaitMs: 0 } as JobProgress,
      startedAt: NOW - 1000,
      now: NOW,
      batchSize: undefined,
      budget: null,
    });
    expect(exporting.projectedFinish).toBeNull();
  });

  it("is now once every person is sent", () => {
    const p = projectFinish({
      progress: sending(900),
      startedAt: NOW - 60_000,
      now: NOW,
      batchSize: 100,
      budget: null,
    });
    expect(p.projectedFinish).toBe(iso(NOW));
  });
});

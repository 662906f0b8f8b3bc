import { describe, expect, it } from "vitest";
import { plainLine } from "../../src/cli/progress/index.ts";
import type { ExportProgress } from "../../src/exports/index.ts";
import type { ImportProgress } from "../../src/imports/index.ts";
import {
  importPercent,
  ProgressModel,
  phaseInWords,
  progressModel,
  projectFinish,
} from "../../src/queue/progress-model.ts";
import { importAt } from "./progress-fixtures.ts";

const T0 = Date.parse("2026-11-23T10:00:00Z");

describe("the progress model", () => {
  it("gives the percent of bytes while reading and of the rows left to send while sending", () => {
    expect(importPercent(importAt("hash", { bytesRead: 500_000 }))).toBe(25);
    expect(importPercent(importAt("read", { bytesRead: 1_999_999 }))).toBe(99);
    // 30,000 read, 600 rejected, 400 merged: 29,000 to send, 14,500 sent.
    expect(
      importPercent(importAt("send", { rowsRead: 30_000, rejected: 600, duplicates: 400, imported: 14_500 })),
    ).toBe(50);
    expect(importPercent(importAt("send", { rowsRead: 10, rejected: 10 }))).toBeUndefined();
    expect(importPercent(importAt("read", { bytesTotal: 0 }))).toBeUndefined();
    expect(importPercent(importAt("done"))).toBe(100);
  });

  it("says what the run is doing in plain words", () => {
    expect(phaseInWords("hash")).toBe("checking whether this file was imported before");
    expect(phaseInWords("read")).toBe("reading and checking rows");
    expect(phaseInWords("send")).toBe("sending batches");
    expect(phaseInWords("send", true)).toBe("checking batches (a dry run sends nothing)");
    const m = progressModel({ state: "active", progress: importAt("read"), now: T0 });
    expect(m).toMatchObject({ state: "running", doing: "reading and checking rows", phase: "read" });
    expect(progressModel({ state: "waiting", progress: undefined, now: T0 }).doing).toBe(
      "waiting for a worker",
    );
  });

  it("projects the finish from the pace so far, leaving out the time waited on the budget", () => {
    const start = T0 - 60_000;
    // Hashing and reading say nothing of how many people will be sent.
    expect(
      projectFinish({
        progress: importAt("read"),
        startedAt: start,
        now: T0,
        budgetWaitMs: 0,
        waitingUntil: null,
      }),
    ).toEqual({
      projectedFinish: null,
      projectionBasis: "projected once the file is read",
    });
    // 2,500 people in 60 s, 20 of them waiting on the budget: 2,500 per 40 s, the 7,500 left take 120 s.
    const sending = importAt("send", { rowsRead: 10_000, imported: 2_500 });
    const m = progressModel({
      state: "import",
      progress: sending,
      now: T0,
      startedAt: start,
      budgetWaitMs: 20_000,
    });
    expect(m).toMatchObject({
      percent: 25,
      projectedFinish: new Date(T0 + 120_000).toISOString(),
      projectionBasis: "7500 people left at the pace so far",
    });
    // No start, no pace.
    expect(progressModel({ state: "import", progress: sending, now: T0 }).projectedFinish).toBeNull();
  });

  it("projects no earlier than a pause's end, nor than the budget's reset when the requests left exceed its window", () => {
    const sending = importAt("send", { rowsRead: 1_000, imported: 500 });
    const until = new Date(T0 + 30_000).toISOString();
    // 500 in 50 s: the 500 left take 50 s once the pause ends.
    const paused = progressModel({
      state: "delayed",
      progress: { ...sending, budgetWaitMs: 10_000, waitingUntil: until },
      now: T0,
      startedAt: T0 - 60_000,
    });
    expect(paused.projectedFinish).toBe(new Date(T0 + 80_000).toISOString());
    expect(paused.projectionBasis).toBe("paused for the rate budget, then 500 people at the pace so far");
    // 5 requests left of 100 people, 2 left in the window: 300 people wait for the reset in 5 minutes.
    const windowed = progressModel({
      state: "active",
      progress: sending,
      now: T0,
      startedAt: T0 - 50_000,
      budget: { remaining: 2, resetAt: T0 + 300_000, peoplePerRequest: 100 },
    });
    expect(windowed.projectedFinish).toBe(new Date(T0 + 300_000 + 30_000).toISOString());
    expect(windowed.projectionBasis).toBe(
      "5 requests left, 2 left in this window of the rate budget: not before its reset",
    );
  });

  it("keeps a queued job's own wait, and drops a wait once its time has passed", () => {
    const until = new Date(T0 + 42_000).toISOString();
    const job = {
      ...importAt("send", { rowsRead: 100, imported: 10 }),
      budgetWaitMs: 3_000,
      waitingUntil: until,
      message: `waiting for rate budget until ${until}`,
    };
    const waiting = progressModel({ state: "delayed", progress: job, now: T0 });
    expect(waiting).toMatchObject({
      state: "waiting to be tried again",
      budgetWaitMs: 3_000,
      waitingUntil: until,
      // The message only repeats the resume time.
      message: null,
    });
    expect(progressModel({ state: "active", progress: job, now: T0 + 43_000 }).waitingUntil).toBeNull();
    // An inline run hears of its waits from the governor, not from its progress.
    const inline = progressModel({
      state: "import",
      progress: importAt("send"),
      now: T0,
      budgetWaitMs: 20_000,
      waitingUntil: until,
    });
    expect(inline).toMatchObject({ budgetWaitMs: 20_000, waitingUntil: until });
  });

  it("lists an export's resources, their totals and the one running", () => {
    const p: ExportProgress = {
      kind: "export",
      runId: "r1",
      resource: "incentives",
      resources: {
        participants: { status: "succeeded", pages: 3, rows: 250 },
        incentives: { status: "running", pages: 2, rows: 120 },
      },
    };
    const m = progressModel({ state: "export", progress: p, now: T0 });
    expect(m.doing).toBe("exporting incentives");
    expect(m.totals).toEqual({ pages: 5, rows: 370 });
    expect(m.resources).toEqual([
      { name: "participants", status: "succeeded", done: true, pages: 3, rows: 250 },
      { name: "incentives", status: "running", done: false, pages: 2, rows: 120 },
    ]);
    expect(m.projectedFinish).toBeNull();
    expect(m.projectionBasis).toBe("not started");
    expect(progressModel({ state: "export", progress: p, now: T0, startedAt: T0 - 1 }).projectionBasis).toBe(
      "an export does not know its size before it ends",
    );
    expect(m.percent).toBeNull();
  });

  it("is plain data its schema accepts, for any progress a job may hold", () => {
    const inputs = [
      undefined,
      { kind: "pending" as const, budgetWaitMs: 0, message: "no worker serves the imports queue" },
      importAt("hash", { bytesRead: 10 }),
      importAt("done", { rowsRead: 5, imported: 5 }),
      { kind: "export" as const, runId: "r", resource: null, resources: {} },
    ];
    for (const progress of inputs) {
      const m = progressModel({ state: "active", progress, now: T0 });
      expect(ProgressModel.parse(m)).toEqual(m);
      expect(JSON.parse(JSON.stringify(m))).toEqual(m);
    }
  });

  it("prints the projected finish in the plain line while sending, not once done", () => {
    // 40 in 20 s: the 60 left take 30 s.
    const at = (phase: ImportProgress["phase"]) =>
      progressModel({
        state: "import",
        progress: importAt(phase, { rowsRead: 100, imported: 40, batches: 2 }),
        now: T0,
        startedAt: T0 - 20_000,
      });
    const hhmmss = new Date(T0 + 30_000).toTimeString().slice(0, 8);
    expect(plainLine(at("send"))).toBe(
      `import: send 40%, 100 rows read, 40 imported, 0 rejected, 2 batches, finishing about ${hhmmss}`,
    );
    expect(plainLine(at("done"))).toBe(
      "import: done 100%, 100 rows read, 40 imported, 0 rejected, 2 batches",
    );
  });
});

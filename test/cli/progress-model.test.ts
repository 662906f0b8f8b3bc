import { describe, expect, it } from "vitest";
import { plainLine } from "../../src/cli/progress/index.ts";
import type { ExportProgress } from "../../src/exports/index.ts";
import type { ImportProgress } from "../../src/imports/index.ts";
import {
  advanceClock,
  importPercent,
  ProgressModel,
  phaseInWords,
  progressModel,
  projectFinish,
} from "../../src/queue/progress-model.ts";

function importAt(phase: ImportProgress["phase"], over: Partial<ImportProgress> = {}): ImportProgress {
  return {
    kind: "import",
    phase,
    bytesRead: 0,
    bytesTotal: 2_000_000,
    rowsRead: 0,
    imported: 0,
    rejected: 0,
    duplicates: 0,
    batches: 0,
    batchesResumed: 0,
    requests: 0,
    ...over,
  };
}

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

  it("projects the finish from the rows sent per second since sending began", () => {
    // Hashing and reading took a minute: they say nothing of how fast the service takes rows.
    let clock = advanceClock(undefined, importAt("read"), T0);
    expect(projectFinish(clock, importAt("read"), T0 + 30_000)).toBeUndefined();
    const sending = importAt("send", { rowsRead: 10_000, imported: 0 });
    clock = advanceClock(clock, sending, T0 + 60_000);
    expect(clock).toEqual({ phase: "send", since: T0 + 60_000, doneAtStart: 0 });
    // Nothing sent yet: no rate, no projection.
    expect(projectFinish(clock, sending, T0 + 60_000)).toBeUndefined();
    // 2,500 rows in 20 s is 125 rows/s: the 7,500 left take 60 s more.
    const later = importAt("send", { rowsRead: 10_000, imported: 2_500 });
    expect(advanceClock(clock, later, T0 + 80_000)).toBe(clock);
    expect(projectFinish(clock, later, T0 + 80_000)).toBe(new Date(T0 + 140_000).toISOString());
    const m = progressModel({
      state: "import",
      progress: later,
      now: T0 + 80_000,
      projectedFinish: projectFinish(clock, later, T0 + 80_000),
    });
    expect(m.projectedFinish).toBe(new Date(T0 + 140_000).toISOString());
    expect(m.percent).toBe(25);
  });

  it("counts only rows sent in this run: a resumed run's earlier batches are not its rate", () => {
    const resumed = importAt("send", { rowsRead: 10_000, imported: 5_000, batchesResumed: 10 });
    const clock = advanceClock(undefined, resumed, T0);
    const later = importAt("send", { rowsRead: 10_000, imported: 6_000, batchesResumed: 10 });
    // 1,000 rows in 10 s: the 4,000 left take 40 s.
    expect(projectFinish(clock, later, T0 + 10_000)).toBe(new Date(T0 + 50_000).toISOString());
  });

  it("keeps a queued job's own wait and projection, and drops a wait once its time has passed", () => {
    const until = new Date(T0 + 42_000).toISOString();
    const job = {
      ...importAt("send", { rowsRead: 100, imported: 10 }),
      budgetWaitMs: 3_000,
      waitingUntil: until,
      projectedFinish: new Date(T0 + 600_000).toISOString(),
      message: `waiting for rate budget until ${until}`,
    };
    const waiting = progressModel({ state: "delayed", progress: job, now: T0 });
    expect(waiting).toMatchObject({
      state: "waiting to be tried again",
      budgetWaitMs: 3_000,
      waitingUntil: until,
      projectedFinish: new Date(T0 + 600_000).toISOString(),
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

  it("prints the projected finish in the plain line while sending", () => {
    const m = progressModel({
      state: "import",
      progress: importAt("send", { rowsRead: 100, imported: 40, batches: 2 }),
      now: T0,
      projectedFinish: new Date(T0 + 90_000).toISOString(),
    });
    const hhmmss = new Date(T0 + 90_000).toTimeString().slice(0, 8);
    expect(plainLine(m)).toBe(
      `import: send 40%, 100 rows read, 40 imported, 0 rejected, 2 batches, finishing about ${hhmmss}`,
    );
  });
});

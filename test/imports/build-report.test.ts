import { describe, expect, it } from "vitest";
import type { BatchEntry } from "../../src/imports/batch.ts";
import {
  buildImportReport,
  type ImportReportParts,
  noReadCounts,
  skippedReport,
} from "../../src/imports/build-report.ts";
import { ImportReport } from "../../src/imports/report.ts";
import { quietWarnings } from "../../src/imports/run-warnings.ts";
import { SendTally } from "../../src/imports/send-counts.ts";
import type { BatchResult } from "../../src/imports/send-phase.ts";

// The report is made in one place from each phase's counts: these check that
// place alone, and the send phase's tally that feeds it.

const entry = (...rows: number[]): BatchEntry => ({ rows }) as unknown as BatchEntry;
const bad = { code: "bad_request" as const, path: [], message: "service: bad" };
const taken = { code: "validation_failed" as const, path: ["email"], message: "service: taken" };

function result(index: number, entries: BatchEntry[], over: Partial<BatchResult> = {}): BatchResult {
  return {
    index,
    people: entries.length,
    resumed: false,
    importIds: [`imp_${index}`],
    imported: entries.length,
    duplicates: 0,
    rejected: [],
    requests: 1,
    countMismatch: false,
    entries,
    refusedEntries: [],
    ...over,
  };
}

function parts(over: Partial<ImportReportParts> = {}): ImportReportParts {
  return {
    identity: {
      job: "crm",
      file: "in.csv",
      dryRun: false,
      unmappedAs: "report",
      encoding: "utf-8",
      delimiter: ",",
      fileHash: "f",
      definitionHash: "d",
    },
    read: noReadCounts(),
    send: new SendTally().counts(),
    warnings: quietWarnings("reject"),
    notes: [],
    files: { rejectsFile: null, requestsFile: null },
    times: { started: 1_000, hashed: 1_200 },
    ...over,
  };
}

describe("SendTally", () => {
  it("counts each batch's people, its refusals, resumed batches and requests; ids in batch order", () => {
    const tally = new SendTally();
    const a = entry(2, 5);
    const b = entry(3);
    const c = entry(4);
    // Answers in another order than the batches.
    expect(
      tally.add(result(1, [c], { refusedEntries: [{ entry: c, problems: [bad] }], requests: 3 })),
    ).toEqual({
      imported: 0,
      rejected: 1,
    });
    expect(tally.add(result(0, [a, b], { resumed: true, requests: 0, countMismatch: true }))).toEqual({
      imported: 2,
      rejected: 0,
    });
    tally.hold(entry(6));
    const counts = tally.counts();
    expect(counts).toEqual({
      imported: 2,
      duplicates: 1,
      unchanged: 1,
      rejected: 1,
      rejectedByReason: { "service: bad": 1 },
      rejectedByCode: { bad_request: 1 },
      batches: 2,
      batchesResumed: 1,
      requests: 3,
      importIds: ["imp_0", "imp_1"],
      warnings: ["batch 0: the service counted a different number of people than were sent"],
      countMismatches: [],
    });
    expect([...tally.refusedRows]).toEqual([[4, [bad]]]);
  });

  it("names each mismatched request's batch and import id in a warning, and lists it", () => {
    const tally = new SendTally();
    const mismatch = { batch: 3, importId: "imp_3", sent: 2, counted: 1 };
    tally.add(result(3, [entry(2), entry(3)], { countMismatch: true, countMismatches: [mismatch] }));
    const counts = tally.counts();
    expect(counts.countMismatches).toEqual([mismatch]);
    expect(counts.warnings).toEqual([
      "batch 3: the service counted 1 of the 2 people sent (import imp_3); they are marked unverified until a participants export checks them",
    ]);
  });

  it("hands out a value: later results do not change counts already taken", () => {
    const tally = new SendTally();
    tally.add(result(0, [entry(2)], { refusedEntries: [] }));
    const before = tally.counts();
    tally.add(result(1, [entry(3)], { refusedEntries: [{ entry: entry(3), problems: [bad] }] }));
    expect(before.batches).toBe(1);
    expect(before.importIds).toEqual(["imp_0"]);
    expect(before.rejectedByReason).toEqual({});
    expect(before.rejectedByCode).toEqual({});
  });
});

describe("buildImportReport", () => {
  it("adds the read phase's rejects to the service's, by reason and by code", () => {
    const tally = new SendTally();
    const refused = entry(9);
    tally.add(
      result(0, [entry(2), entry(3, 4), refused], {
        refusedEntries: [{ entry: refused, problems: [taken] }],
      }),
    );
    const read = {
      ...noReadCounts(),
      rowsRead: 6,
      rejected: 2,
      rejectedByReason: { "Email: invalid": 1, "service: taken": 1 },
      rejectedByCode: { invalid_format: 1, validation_failed: 1 },
      blankRows: 1,
      optInsHeldBack: 1,
      unmappedColumns: ["Notes"],
    };
    const report = buildImportReport(
      parts({ read, send: tally.counts(), times: { started: 1_000, hashed: 1_200, finished: 3_000 } }),
    );
    expect(report).toMatchObject({
      rowsRead: 6,
      imported: 2,
      duplicates: 1,
      rejected: 3,
      blankRows: 1,
      optInsHeldBack: 1,
      rejectedByReason: { "Email: invalid": 1, "service: taken": 2 },
      rejectedByCode: { invalid_format: 1, validation_failed: 2 },
      unmappedColumns: ["Notes"],
      batches: 1,
      importIds: ["imp_0"],
      warnings: [],
    });
    expect(ImportReport.safeParse(report).success).toBe(true);
  });

  it("does not share the phases' maps: a later count does not change a report already made", () => {
    const read = {
      ...noReadCounts(),
      rowsRead: 1,
      rejected: 1,
      rejectedByReason: { a: 1 },
      rejectedByCode: { c: 1 },
    };
    const report = buildImportReport(parts({ read }));
    read.rejectedByReason.a = 5;
    read.rejectedByCode.c = 5;
    expect(report.rejectedByReason).toEqual({ a: 1 });
    expect(report.rejectedByCode).toEqual({ c: 1 });
  });

  it("gives a finished run its times and speed, and a run that failed its counts so far", () => {
    const read = { ...noReadCounts(), rowsRead: 3_000, rejected: 3_000 };
    const finished = buildImportReport(
      parts({ read, times: { started: 1_000, hashed: 1_200, read: 2_200, sending: 1_500, finished: 4_000 } }),
    );
    expect(finished).toMatchObject({
      durationMs: 3_000,
      rowsPerSecond: 1_000,
      phasesMs: { hash: 200, read: 1_000, send: 2_500 },
      startedAt: new Date(1_000).toISOString(),
    });
    const failed = buildImportReport(
      parts({ read, times: { started: 1_000, hashed: 1_200, sending: 1_500 } }),
    );
    expect(failed).toMatchObject({
      durationMs: 0,
      rowsPerSecond: 0,
      phasesMs: { hash: 200, read: 0, send: 0 },
    });
    expect(failed.warnings).toEqual([]);
    // The end's checks wait for the end: a run that failed before its first row is not "a file without rows".
    expect(buildImportReport(parts()).warnings).toEqual([]);
  });

  it("checks at the end that every row is accounted for, and warns of a file without rows", () => {
    const end = { started: 0, hashed: 0, finished: 10 };
    const short = buildImportReport(
      parts({ read: { ...noReadCounts(), rowsRead: 4, rejected: 1 }, times: end }),
    );
    expect(short.warnings).toEqual([
      "counts do not add up: 4 rows read, 0 + 1 + 0 + 0 unchanged accounted for",
    ]);
    const empty = buildImportReport(parts({ times: end }));
    expect(empty.warnings).toEqual(["the file has a header but no rows"]);
  });

  it("lists warnings as the run met them: the run's notes, the batches', then the warnings phase's", () => {
    const tally = new SendTally();
    tally.add(result(0, [entry(2)], { countMismatch: true }));
    const warnings = {
      ...quietWarnings("drop"),
      warnings: ["phone hint"],
      droppedValues: 2,
      warningsFile: "w.csv",
    };
    const report = buildImportReport(
      parts({
        read: { ...noReadCounts(), rowsRead: 1 },
        send: tally.counts(),
        warnings,
        notes: ["change-only unavailable"],
        changeState: "unavailable",
        times: { started: 0, hashed: 0, finished: 1 },
      }),
    );
    expect(report.warnings).toEqual([
      "change-only unavailable",
      "batch 0: the service counted a different number of people than were sent",
      "phone hint",
    ]);
    expect(report).toMatchObject({
      changeState: "unavailable",
      invalidOptionalValues: "drop",
      droppedValues: 2,
      warningsFile: "w.csv",
    });
  });
});

describe("skippedReport", () => {
  it("is the earlier run's report, as skipped now, with nothing sent", () => {
    const earlier = buildImportReport(
      parts({ read: { ...noReadCounts(), rowsRead: 0 }, times: { started: 0, hashed: 0, finished: 1 } }),
    );
    const report = skippedReport(
      {
        status: "done",
        file: "old.csv",
        startedAt: "2026-01-01T00:00:00.000Z",
        finishedAt: "2026-01-02T00:00:00.000Z",
        report: { ...earlier, requests: 7 },
      },
      { job: "again", file: "new.csv", started: 5_000, now: 5_250 },
    );
    expect(report).toMatchObject({
      status: "skipped",
      job: "again",
      file: "new.csv",
      requests: 0,
      durationMs: 250,
      warnings: [],
      skippedBecause: "already imported on 2026-01-02T00:00:00.000Z",
    });
  });
});

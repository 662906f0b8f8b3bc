import { describe, expect, it } from "vitest";
import { createProgressView, importReportTable, inlineProgress } from "../../src/cli/progress/index.ts";
import type { ExportProgress } from "../../src/exports/index.ts";
import type { ImportReport } from "../../src/imports/index.ts";
import { createLogger, humanDestination, humanLine } from "../../src/logger/index.ts";
import { capture, importAt } from "./progress-fixtures.ts";

/** ESC shown as ⎋, so the expectations can name the cursor moves. */
const visible = (text: string) => text.replaceAll("\x1b", "⎋");

const report: ImportReport = {
  kind: "import",
  job: "hubspot-contacts",
  file: "/tmp/contacts.csv",
  status: "completed",
  dryRun: false,
  rowsRead: 30_000,
  imported: 29_400,
  rejected: 600,
  duplicates: 3,
  blankRows: 0,
  optInsHeldBack: 0,
  optedOut: 0,
  shortRows: 0,
  unchanged: 0,
  batches: 59,
  batchesResumed: 0,
  requests: 59,
  importIds: [],
  countMismatches: [],
  rejectsFile: null,
  requestsFile: null,
  unmappedColumns: [],
  unmappedAs: "report",
  ignoredColumns: [],
  rejectedByReason: { "Email: Invalid email address": 598, "Phone: not a number": 2 },
  rejectedByCode: { invalid_format: 598, not_a_phone: 2 },
  invalidOptionalValues: "reject",
  droppedValues: 0,
  rowsWithDroppedValues: 0,
  droppedByField: {},
  warningsFile: null,
  phonesWithoutCountry: 0,
  encoding: "utf-8",
  delimiter: ",",
  fileHash: "f",
  definitionHash: "d",
  warnings: [],
  startedAt: "2026-11-23T10:00:00.000Z",
  durationMs: 23_100,
  phasesMs: { hash: 1, read: 2, send: 3 },
  rowsPerSecond: 1300,
};

describe("progress when the output is not a terminal", () => {
  it("prints plain lines with the phase, bytes, rows, batches and rejects, no ANSI", () => {
    const out = capture(false);
    const t = 0;
    const view = createProgressView(out.stream, { plainEveryMs: 2000, now: () => t });
    view.update("import", importAt("hash", { bytesRead: 1_000_000 }));
    view.update("import", importAt("read", { bytesRead: 500_000, rowsRead: 7_000, rejected: 12 }));
    view.update(
      "import",
      importAt("send", { bytesRead: 2_000_000, rowsRead: 30_000, imported: 5_000, batches: 10 }),
    );
    view.close();
    expect(out.text()).not.toContain("\x1b");
    expect(out.text().trimEnd().split("\n")).toEqual([
      "import: hash 50%, 0 rows read, 0 imported, 0 rejected, 0 batches",
      "import: read 25%, 7,000 rows read, 0 imported, 12 rejected, 0 batches",
      "import: send 16%, 30,000 rows read, 5,000 imported, 0 rejected, 10 batches",
    ]);
  });

  it("keeps to a modest rate within a phase and prints the last state when it closes", () => {
    const out = capture(false);
    let t = 0;
    const view = createProgressView(out.stream, { plainEveryMs: 2000, now: () => t });
    for (let i = 1; i <= 100; i++) {
      t = i * 10; // 100 updates within one second
      view.update("import", importAt("read", { bytesRead: i * 20_000, rowsRead: i * 300 }));
    }
    expect(out.text().trimEnd().split("\n")).toHaveLength(1);
    t = 2500;
    view.update("import", importAt("read", { bytesRead: 1_990_000, rowsRead: 29_900 }));
    expect(out.text().trimEnd().split("\n")).toHaveLength(2);
    view.update("import", importAt("read", { bytesRead: 2_000_000, rowsRead: 30_000 }));
    view.close();
    const lines = out.text().trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("import: read 100%, 30,000 rows read, 0 imported, 0 rejected, 0 batches");
  });

  it("says until when it waits on the rate budget, at once", () => {
    const out = capture(false);
    let t = Date.parse("2026-11-23T10:00:00Z");
    const view = createProgressView(out.stream, { plainEveryMs: 60_000, now: () => t });
    view.update("import", importAt("send", { bytesRead: 2_000_000, rowsRead: 100, batches: 2 }));
    const until = new Date(t + 42_000);
    view.budgetWait(42_000, until);
    const hhmmss = until.toTimeString().slice(0, 8);
    expect(out.text()).toContain(
      `42.0 s waiting on the rate budget, waiting for the rate budget until ${hhmmss}`,
    );
    expect(view.budgetWaitMs).toBe(42_000);
    t += 43_000;
    view.update("import", importAt("send", { bytesRead: 2_000_000, rowsRead: 100, batches: 3 }));
    view.close();
    expect(out.text().trimEnd().split("\n").at(-1)).not.toContain("until");
  });

  it("says what a dry run would import, not that it imported", () => {
    const out = capture(false);
    // A clock that does not move: a millisecond between start and update made a projected finish (on a loaded machine).
    const view = createProgressView(out.stream, { dryRun: true, now: () => 1_795_000_000_000 });
    view.update("import", importAt("send", { bytesRead: 2_000_000, rowsRead: 10, imported: 4, batches: 1 }));
    view.close();
    expect(out.text()).toBe("import: send 40%, 10 rows read, would import 4, 0 rejected, 1 batches\n");
  });

  it("prints pages and rows per resource for an export, and a queued job's state", () => {
    const out = capture(false);
    const view = createProgressView(out.stream, { plainEveryMs: 0 });
    const p: ExportProgress = {
      kind: "export",
      runId: "r1",
      resource: "participants",
      resources: {
        participants: { status: "succeeded", pages: 3, rows: 250 },
        email_messages: { status: "running", pages: 1, rows: 100 },
      },
    };
    view.update("active", { ...p, budgetWaitMs: 1500 });
    view.close();
    // The queue's "active" in people's words.
    expect(out.text()).toBe(
      "running: participants 250 rows/3 pages (succeeded), email_messages 100 rows/1 pages (running), 1.5 s waiting on the rate budget\n",
    );
  });
});

describe("progress on a terminal", () => {
  it("redraws bars in place with the counts, then leaves the final table below", () => {
    const out = capture(true, 100);
    const progress = inlineProgress("import", { out: out.stream });
    progress.onProgress(importAt("read", { bytesRead: 1_000_000, rowsRead: 15_000, rejected: 300 }));
    progress.onBudgetWait(20_000, new Date(Date.now() + 20_000));
    progress.onProgress(
      importAt("send", {
        bytesRead: 2_000_000,
        rowsRead: 30_000,
        imported: 20_000,
        rejected: 600,
        batches: 40,
        requests: 40,
      }),
    );
    progress.finish(importReportTable(report, progress.budgetWaitMs));
    const text = visible(out.text());
    // The first drawing, the read phase at 50 % with a bar and the bytes.
    expect(text).toMatch(/import read +\[#{12}-{12}\] +50% +976\.6 KiB\/1\.9 MiB/);
    // Redrawn in place: the cursor back up over the lines drawn before, each line cleared to its end.
    expect(text).toMatch(/⎋\[2A⎋\[1G/);
    expect(text).toMatch(/⎋\[0K\n/);
    // The last drawing, with the counts and the wait's resume time.
    const last = text.slice(text.lastIndexOf("⎋[2A"));
    // Sending: the share of the rows left after rejects, 20,000 of 29,400.
    expect(last).toMatch(/import send +\[#{16}-{8}\] +68%/);
    expect(last).toContain("rows 30,000  imported 20,000  rejected 600  batches 40  requests 40");
    expect(last).toMatch(/waiting for the rate budget until \d\d:\d\d:\d\d/);
    // The final table, below the last drawing.
    expect(last).toContain(
      "rows read  imported  rejected  merged  batches  requests  seconds  rows/s  budget wait s",
    );
    expect(last).toMatch(/30,000 +29,400 +600 +3 +59 +59 +23\.1 +1,300 +20\.0/);
    expect(last).toMatch(
      /rejected because +rows\n +Email: Invalid email address +598\n +Phone: not a number +2/,
    );
    // No line wider than the terminal: a wrapped line would break the redraw.
    for (const line of text.split(/⎋\[\d*[AGJK]|\n/)) expect(line.length).toBeLessThan(100);
  });

  it("draws a line per resource for an export", () => {
    const out = capture(true, 80);
    const view = createProgressView(out.stream);
    view.update("active", {
      kind: "export",
      runId: "r1",
      resource: "incentives",
      resources: {
        participants: { status: "succeeded", pages: 3, rows: 250 },
        incentives: { status: "running", pages: 2, rows: 120 },
      },
      budgetWaitMs: 0,
    });
    view.close();
    const text = visible(out.text());
    expect(text).toContain("running export: 5 pages, 370 rows");
    expect(text).toContain("exporting incentives");
    // A bar per resource: full once the resource is done, empty while it runs (its pages are not known ahead).
    expect(text).toMatch(/participants +\[#{12}\] +done +pages +3 +rows +250/);
    expect(text).toMatch(/incentives +\[-{12}\] +running +pages +2 +rows +120/);
    for (const line of text.split(/⎋\[\d*[AGJK]|\n/)) expect(line.length).toBeLessThan(80);
  });

  it("lifts the bar out of the way of a log line and draws it again below", () => {
    const out = capture(true, 80);
    const view = createProgressView(out.stream);
    view.update("import", importAt("read", { bytesRead: 1_000_000 }));
    const before = out.text().length;
    const logger = createLogger({ level: "info", destination: humanDestination(out.stream) });
    logger.warn({ operationId: "createImport", attempt: 2 }, "retrying after a network fault");
    view.close();
    const after = visible(out.text().slice(before));
    // Back to the first line of the bars, cleared to the end of the screen, the log line, then the bars again.
    expect(after).toMatch(
      /^⎋\[2A⎋\[1G⎋\[0J\d\d:\d\d:\d\d WARN {2}retrying after a network fault {2}operationId=createImport attempt=2\n(⎋\[1G)+import read/,
    );
  });
});

describe("human log lines", () => {
  it("show the level, the message and safe fields, never an address, a phone or a token", () => {
    const chunks: string[] = [];
    const logger = createLogger({
      level: "info",
      destination: humanDestination({ write: (c: string) => chunks.push(c) }),
    });
    logger.info(
      {
        job: "hubspot-contacts",
        rows: 12,
        email: "priya.patel@example.org",
        phone: "+14155550132",
        token: "secret-token",
        detail: "zoe.mueller@example.org",
        err: { code: "network_error", message: "cannot reach zoe.mueller@example.org" },
      },
      "batch sent",
    );
    expect(chunks).toHaveLength(1);
    const line = chunks[0] as string;
    expect(line).toMatch(
      /^\d\d:\d\d:\d\d INFO {2}batch sent {2}job=hubspot-contacts rows=12 error=network_error\n$/,
    );
    expect(line).not.toMatch(/example\.org|4155550132|secret-token|\{/);
  });

  it("pass a line that is not JSON through as it is", () => {
    expect(humanLine("plain words\n")).toBe("plain words");
  });
});

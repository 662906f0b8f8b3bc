import type { Job } from "bullmq";
import { describe, expect, it } from "vitest";
import { groupRuns, runJobName, summarizeRun } from "../../src/alerts/index.ts";

/** The fields of a finished BullMQ job the run history reads. */
function job(fields: Partial<Job>): Job {
  return { id: "1", processedOn: 1_000, finishedOn: 4_500, timestamp: 900, ...fields } as Job;
}

describe("a finished job as the run history shows it", () => {
  it("reads an export's rows from its report's totals and its wall-clock budget wait from its progress", () => {
    const run = summarizeRun(
      job({
        data: { kind: "export", job: "nightly-export", origin: "schedule" },
        returnvalue: {
          status: "succeeded",
          totals: { rows: 5120, pages: 52, requests: 60, rowsPerSecond: 1 },
        },
        progress: { kind: "pending", budgetWaitMs: 1234.4 },
      }),
      "exports",
      "completed",
    );
    expect(run).toMatchObject({
      job: "nightly-export",
      state: "completed",
      origin: "schedule",
      durationMs: 3500,
      rows: 5120,
      rejected: null,
      budgetWaitMs: 1234,
      code: null,
    });
  });

  it("says skipped for a tick that found another run, and gives a failure its code and partial counts", () => {
    const skipped = summarizeRun(
      job({ data: { kind: "export", job: "nightly-export" }, returnvalue: { status: "skipped" } }),
      "exports",
      "completed",
    );
    expect(skipped.state).toBe("skipped");
    const failed = summarizeRun(
      job({
        data: { kind: "import", job: "crm" },
        progress: {
          kind: "pending",
          budgetWaitMs: 0,
          failure: {
            code: "import_mostly_rejected",
            message: "…",
            retryable: false,
            final: true,
            report: { rowsRead: 1000, rejected: 700 },
          },
        },
      }),
      "imports",
      "failed",
    );
    expect(failed).toMatchObject({
      state: "failed",
      code: "import_mostly_rejected",
      rows: 1000,
      rejected: 700,
    });
  });

  it("names a run by its job, else its inline definition's name, else its preset", () => {
    expect(runJobName({ kind: "import", job: "crm" })).toBe("crm");
    expect(runJobName({ kind: "import", definition: { name: "kontakte-export" } })).toBe("kontakte-export");
    expect(runJobName({ kind: "import", preset: "hubspot" })).toBe("hubspot preset");
    expect(runJobName({ kind: "export" })).toBe("export");
  });

  it("groups runs per job and queue, newest first, as many as asked", () => {
    const runs = [3, 2, 1].map((n) =>
      summarizeRun(job({ id: String(n), data: { kind: "import", job: "crm" } }), "imports", "completed"),
    );
    const groups = groupRuns(runs, 2);
    expect(groups).toHaveLength(1);
    expect(groups[0]?.runs.map((r) => r.id)).toEqual(["3", "2"]);
  });
});

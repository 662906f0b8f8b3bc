import { describe, expect, it } from "vitest";
import { ConfigError, RecruitSyncError, SinkError, UsageError } from "../../src/errors/index.ts";
import { ImportFileError } from "../../src/imports/index.ts";
import { OpsHttpError, opsRefusal } from "../../src/ops/ops-http-error.ts";
import { jobReport } from "../../src/queue/index.ts";
import { JobNotFoundError } from "../../src/runtime/index.ts";

const answer = (
  err: unknown,
  invalid: "ops_invalid_request" | "ops_invalid_overrides" = "ops_invalid_request",
) => {
  const r = opsRefusal(err, invalid);
  return r instanceof OpsHttpError ? { status: r.status, code: r.code, problems: r.problems } : r;
};

describe("opsRefusal: one table from an error's class and code to its HTTP answer", () => {
  it("answers by class, whatever the message says", () => {
    // Messages that the old regexes would have read the other way round.
    expect(answer(new JobNotFoundError("a job definition that is invalid"))).toMatchObject({
      status: 404,
      code: "ops_job_unknown",
    });
    const issues = [{ path: "target.studyId", message: "required" }];
    expect(answer(new ConfigError("no job definition named x", issues))).toEqual({
      status: 422,
      code: "ops_job_invalid",
      problems: issues,
    });
    expect(answer(new UsageError("no such file: /a.csv"), "ops_invalid_overrides")).toEqual({
      status: 400,
      code: "ops_invalid_overrides",
      problems: [],
    });
    expect(answer(new UsageError("gone", [{ path: "file", message: "gone" }]))).toEqual({
      status: 400,
      code: "ops_invalid_request",
      problems: [{ path: "file", message: "gone" }],
    });
  });

  it("answers a file the workers may not read with 403 at path file, another file problem with 422 and its code", () => {
    expect(answer(new ImportFileError("file_not_allowed", "refused"))).toEqual({
      status: 403,
      code: "file_not_allowed",
      problems: [{ path: "file", message: "refused" }],
    });
    expect(answer(new ImportFileError("file_binary", "binary"))).toMatchObject({
      status: 422,
      code: "file_binary",
    });
  });

  it("answers an error of ours that may pass later with 503 and its own code, but never a bug's", () => {
    expect(answer(new SinkError("the warehouse is away", { retryable: true }))).toEqual({
      status: 503,
      code: "sink_failed",
      problems: [],
    });
    const bug = new RecruitSyncError("internal", "a bug", { retryable: true });
    expect(opsRefusal(bug, "ops_invalid_request")).toBe(bug);
  });

  it("hides a path the answer must not show, and leaves what it does not know to the error handler", () => {
    const hidden = opsRefusal(
      new ImportFileError("file_empty", "/srv/uploads/u1/file.csv is empty"),
      "ops_invalid_request",
      {
        hide: "/srv/uploads/u1/file.csv",
      },
    );
    expect((hidden as OpsHttpError).message).toBe("the file is empty");
    const internal = new RecruitSyncError("internal", "a bug");
    expect(opsRefusal(internal, "ops_invalid_request")).toBe(internal);
    const plain = new Error("driver");
    expect(opsRefusal(plain, "ops_invalid_request")).toBe(plain);
  });
});

describe("jobReport", () => {
  it("reads a completed job's return value, and a failed job's report from its recorded failure", () => {
    const report = { kind: "import", rowsRead: 3 };
    expect(jobReport({ state: "completed", returnvalue: report, progress: undefined })).toBe(report);
    const failure = { code: "internal" as const, message: "x", retryable: false, final: true, report };
    const progress = { kind: "pending" as const, budgetWaitMs: 0, failure };
    expect(jobReport({ state: "failed", returnvalue: null, progress: progress as never })).toBe(report);
    expect(jobReport({ state: "failed", returnvalue: null, progress: undefined })).toBeUndefined();
  });
});

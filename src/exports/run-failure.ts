import { type ErrorCode, RecruitSyncError } from "../errors/index.ts";
import type { ResourceReport, RunReport } from "./run-report.ts";
import type { RunStop, Stop } from "./run-stop.ts";

/** How a resource that did not succeed ended, as its report and sync_runs row give it. */
export interface ResourceFailure {
  status: Exclude<ResourceReport["status"], "succeeded">;
  error: string;
  errorCode: ErrorCode;
  retryable: boolean;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** A failure's code and whether trying again may help, as a resource report gives them. */
function codeOf(err: unknown): { errorCode: ErrorCode; retryable: boolean } {
  return err instanceof RecruitSyncError
    ? { errorCode: err.code, retryable: err.retryable }
    : { errorCode: "internal", retryable: true };
}

/** A resource's streams failed with `err`: interrupted by the caller, cut short by the run's stop, or failed on their own. */
export function resourceFailure(err: unknown, run: RunStop): ResourceFailure {
  if (run.caller?.aborted) {
    return {
      status: "interrupted",
      error: `aborted: ${errorMessage(run.caller.reason ?? err)}`,
      errorCode: "interrupted",
      retryable: true,
    };
  }
  if (run.stop !== undefined && err === run.stop.err) {
    return { status: "failed", error: run.stop.message, ...codeOf(run.stop.err) };
  }
  return { status: "failed", error: errorMessage(err), ...codeOf(err) };
}

/** The warehouse failed the resource's last commit: the report still says what happened first. */
export function sinkFailure(before: ResourceFailure | undefined, err: unknown): ResourceFailure {
  return {
    status: "failed",
    error: before?.error ?? errorMessage(err),
    errorCode: before?.errorCode ?? (err instanceof RecruitSyncError ? err.code : "sink_failed"),
    retryable: before?.retryable ?? (err instanceof RecruitSyncError ? err.retryable : true),
  };
}

/** The error a failed run ends with: the first failure's code, retryable only when every failure is. */
export function runFailure(report: RunReport, stop: Stop | undefined, cause: unknown): RecruitSyncError {
  const failed = Object.entries(report.resources).filter(([, r]) => r.status !== "succeeded");
  const interrupted = report.status === "interrupted";
  const first = failed[0]?.[1];
  if (stop && !interrupted) {
    // Every resource the stop cut short says the same: the run ends with what stopped it.
    const { errorCode, retryable } = codeOf(stop.err);
    return new RecruitSyncError(errorCode, `export ${report.runId} stopped: ${stop.message}`, {
      retryable,
      report,
      cause: stop.err,
    });
  }
  const code = interrupted
    ? "interrupted"
    : failed.length === 1
      ? (first?.errorCode ?? "export_failed")
      : "export_failed";
  const retryable = interrupted || (failed.length > 0 && failed.every(([, r]) => r.retryable === true));
  const what = failed.map(([name, r]) => `${name}: ${r.error ?? r.status}`).join("; ");
  return new RecruitSyncError(code, `export ${report.runId} ${report.status}: ${what}`, {
    retryable,
    report,
    cause,
  });
}

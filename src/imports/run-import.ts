import { RecruitSyncError, runFailure } from "../errors/index.ts";
import type { RunImportOptions } from "./import-options.ts";
import { startRun } from "./import-run.ts";
import { openImport } from "./open-import.ts";
import { openRunFiles } from "./open-run-files.ts";
import { readMergeAndSend } from "./read-and-send.ts";
import type { ImportReport } from "./report.ts";
import { finishRun } from "./run-finish.ts";

export type { BatchProgress, ChangeOnlyOptions, RunImportOptions } from "./import-options.ts";

/**
 * Imports one CSV file, with every row accounted for: rowsRead = imported +
 * rejected + duplicates + unchanged. The phases run at once, each its own module:
 *
 * 1. read and validate (run-read.ts, read-phase.ts): every row mapped and
 *    checked against the contract; refused rows to the rejects file, valid
 *    people on;
 * 2. merge and batch (merge-phase.ts): each person merged into their latest
 *    version as their rows come, the unchanged left out (sent-state.ts),
 *    batches of one population cut as they fill;
 * 3. send (run-send.ts, send-phase.ts): several batches in flight, each recorded in the
 *    ledger when its answer comes, batches an earlier run finished skipped;
 * 4. late rejects (run-finish.ts, late-rejects.ts), at the end: rows the service
 *    refused, their cells read back from the file;
 * 5. warnings (run-warnings.ts), at the end: the values `drop` left out of
 *    people who were imported.
 *
 * Each phase returns its counts; the report is made from them in one place
 * (build-report.ts).
 *
 * Nothing is sent until the gate: GATE_ROWS rows read (or the whole of a
 * shorter file), more than half of them rejected failing the run before any
 * request (send-gate.ts), and the batch sizes decided (batch-sizing.ts).
 * A read that fails later fails the run with the report of what was sent.
 *
 * @example
 * const report = await runImport({ file: "samples/hubspot-contacts.csv", definition, client,
 *   rejectsFile: "data/hubspot.rejects.csv", ledger: { redis, prefix: "recruit-sync" } });
 * console.log(formatSummary(report));
 */
export async function runImport(options: RunImportOptions): Promise<ImportReport> {
  const run: RunState = { report: undefined };
  try {
    return await importFile(options, run);
  } catch (err) {
    const signal = options.signal;
    const stopped =
      signal?.aborted && !(err instanceof RecruitSyncError && err !== signal.reason)
        ? stoppedError(signal.reason)
        : err;
    const report = run.report?.();
    const failure = runFailure(stopped, report);
    options.logger?.warn(
      { job: report?.job, code: failure.code, retryable: failure.retryable },
      "import failed",
    );
    throw failure;
  }
}

/** The report as the phases' counts stand, for the error that ends a run. */
interface RunState {
  report: (() => ImportReport) | undefined;
}

/** An abort ends a run as `interrupted`, retryable: the ledger lets the next attempt resume. */
function stoppedError(reason: unknown): RecruitSyncError {
  if (reason instanceof RecruitSyncError) return reason;
  const message = reason instanceof Error ? reason.message : "stopped";
  return new RecruitSyncError("interrupted", `interrupted: ${message}`, { cause: reason, retryable: true });
}

/**
 * The run, phase after phase: open; read and map, merge and send, all at
 * once; the rejects and warnings that need every answer; the report. The
 * files the phases write to (RunFiles) are closed in `finally`; the phases
 * return their counts into ImportCounts, from which the report is made.
 */
async function importFile(options: RunImportOptions, run: RunState): Promise<ImportReport> {
  if (options.dryRun !== true && options.client === undefined) {
    throw new RecruitSyncError("usage", "runImport needs a client unless it is a dry run");
  }
  const opened = await openImport(options);
  if ("skipped" in opened) return opened.skipped;
  run.report = () => opened.counts.report();
  const files = await openRunFiles(options, opened.format);
  try {
    const r = startRun(options, opened, files);
    const warnings = await readMergeAndSend(r);
    options.personLog?.sent?.();
    return await finishRun(r, warnings);
  } finally {
    await files.close();
  }
}

import type { ApiClient } from "../api/index.ts";
import { RecruitSyncError, runFailure } from "../errors/index.ts";
import { Batcher } from "./batch.ts";
import type { RunImportOptions } from "./import-options.ts";
import { writeLateRejects } from "./late-rejects.ts";
import { StreamMerge } from "./merge-phase.ts";
import { type OpenedImport, openImport } from "./open-import.ts";
import { readAndValidate } from "./read-phase.ts";
import { GATE_ROWS } from "./refusal-rule.ts";
import type { ImportReport } from "./report.ts";
import { RunFiles } from "./run-files.ts";
import { SendGate } from "./send-gate.ts";
import { sendBatches } from "./send-phase.ts";
import { batchSender } from "./send-to-service.ts";
import { unverifiedMarker } from "./unverified-marker.ts";
import { warningsFileBeside } from "./warnings-file.ts";

export type { BatchProgress, ChangeOnlyOptions, RunImportOptions } from "./import-options.ts";

/**
 * Imports one CSV file, with every row accounted for: rowsRead = imported +
 * rejected + duplicates + unchanged. The phases run at once, each its own module:
 *
 * 1. read and validate (read-phase.ts): every row mapped and checked against
 *    the contract; refused rows to the rejects file, valid people on;
 * 2. merge and batch (merge-phase.ts): each person merged into their latest
 *    version as their rows come, the unchanged left out (sent-state.ts),
 *    batches of one population cut as they fill;
 * 3. send (send-phase.ts): several batches in flight, each recorded in the
 *    ledger when its answer comes, batches an earlier run finished skipped;
 * 4. late rejects (late-rejects.ts), at the end: rows the service
 *    refused, their cells read back from the file;
 * 5. warnings (run-warnings.ts), at the end: the values `drop` left out of
 *    people who were imported.
 *
 * Each phase returns its counts; the report is made from them in one place
 * (build-report.ts).
 *
 * Nothing is sent until the gate: GATE_ROWS rows read (or the whole of a
 * shorter file), more than half of them rejected failing the run before any
 * request (checkNotMostlyRejected), and the batch sizes decided (batch-sizing.ts).
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

/** A run past its open phase: what every later phase reads and writes. */
interface ImportRun extends OpenedImport {
  options: RunImportOptions;
  files: RunFiles;
  merge: StreamMerge;
  gate: SendGate;
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
  const files = await RunFiles.open(options, opened.csv);
  try {
    const r = startRun(options, opened, files);
    await readMergeAndSend(r);
    await writeRejectsAndWarnings(r);
    return await finishRun(r);
  } finally {
    await files.close();
  }
}

/** The merge, and the gate that opens sending once the first rows are judged. */
function startRun(options: RunImportOptions, opened: OpenedImport, files: RunFiles): ImportRun {
  const def = options.definition;
  const { counts, job, ledger } = opened;
  let gate: SendGate | undefined;
  const merge = new StreamMerge({
    store: files.store,
    batcher: new Batcher(() => undefined),
    sieving: options.changes !== undefined,
    onUnchanged: (entry) => {
      counts.send.hold(entry);
      options.personLog?.held(entry);
    },
    // A few batches of slack between reading and sending (docs/performance.md has the runs with one, two and six):
    // each waiting batch holds 1,000 people on the main thread's heap, long enough to be promoted.
    maxQueued: () => (gate as SendGate).inFlight + 2,
  });
  gate = new SendGate(options, { def, job, ledger, merge, counts });
  return { ...opened, options, files, merge, gate };
}

/**
 * Reading (and mapping and merging, as rows come) and sending run at once:
 * the first failure of either stops the other, keeps the change state's
 * stamps so far, closes the rejects file for the report to point at, and
 * is thrown.
 */
async function readMergeAndSend(r: ImportRun): Promise<void> {
  const readStop = new AbortController();
  let failure: { error: unknown } | undefined;
  const sending = sendPhase(r).catch((error: unknown) => {
    failure ??= { error };
    r.gate.firstAnswer.reject(error);
    r.merge.stop(error);
    readStop.abort(error);
  });
  const reading = readPhase(r, readStop.signal).catch((error: unknown) => {
    failure ??= { error };
    r.merge.stop(error);
  });
  await Promise.all([reading, sending]);
  readStop.abort();
  if (!failure) return;
  // Another run of this scope may finish before the retry and make the state comparable:
  // the people this one got accepted must be in it then, or the retry sends them again.
  await r.gate.sent?.keep().catch(() => {});
  // The rows rejected so far are the report's to point at: a file refused as mostly rejected is mended from them.
  r.counts.files.rejectsFile = await r.files.rejects.close().catch(() => null);
  throw failure.error;
}

/** Read and map (read-phase.ts), each valid person merged as it comes (merge-phase.ts), the gate opened on the way. */
async function readPhase(r: ImportRun, stop: AbortSignal): Promise<void> {
  const { options, csv, counts, progress, files, gate } = r;
  const read = await readAndValidate({
    file: options.file,
    csv,
    definition: options.definition,
    people: r.merge,
    warnings: files.warnings,
    rejects: files.rejects,
    ...(options.personLog ? { personLog: options.personLog } : {}),
    ...(options.parseInWorker === undefined ? {} : { worker: options.parseInWorker }),
    stamps: options.changes !== undefined,
    signal: options.signal ? AbortSignal.any([options.signal, stop]) : stop,
    onChunk: (bytesRead, c) => {
      counts.read = { ...counts.read, ...c };
      files.store.expect(c.rowsRead + c.blankRows, bytesRead, csv.size);
      progress.tell("read", bytesRead);
    },
    gate: {
      rows: GATE_ROWS,
      open: (c, bytesRead) => {
        // The report of a file refused here counts the rows that decided it.
        counts.read = { ...counts.read, ...c };
        gate.open(c, bytesRead, csv.size);
      },
    },
  });
  counts.read = {
    ...read.counts,
    unmappedColumns: read.unmappedColumns,
    ignoredColumns: read.ignoredColumns,
  };
  counts.times.read = Date.now();
  const rejected = counts.read.rejected + counts.send.rejected;
  options.logger?.info({ job: r.job, rows: counts.read.rowsRead, rejected }, "file read");
  progress.tell("send", csv.size);
  // Out of memory once the file is read: what a killed run leaves is whole on disk, for the rerun to remove.
  await files.store.flush();
  await gate.passed(read.counts, csv.size);
  await r.merge.end();
}

/** Send (send-phase.ts): the batches as the merge cuts them, each recorded in the ledger when answered. */
async function sendPhase(r: ImportRun): Promise<void> {
  const { options, counts, gate } = r;
  const def = options.definition;
  const send = options.dryRun
    ? batchSender(def, { dryRun: true, requests: r.files.requests })
    : batchSender(def, {
        dryRun: false,
        client: options.client as ApiClient,
        records: {
          ledger: r.ledger,
          sent: () => gate.sent,
          unverified: unverifiedMarker(options, def, r.job),
        },
        // Not the stop: a request on the wire is answered, and recorded, unless the stop's deadline passes.
        abandon: options.abandon,
      });
  await sendBatches({
    batches: r.merge.batches(),
    finished: (index) => gate.finished.get(index),
    concurrency: () => gate.inFlight,
    send,
    onResult: async (result) => {
      gate.firstAnswer.resolve();
      if (result.resumed && gate.sent) {
        const refused = new Set(result.refusedEntries.map((x) => x.entry));
        gate.sent.recordResumed(result.entries.filter((e) => !refused.has(e)));
      }
      const counted = counts.send.add(result);
      options.personLog?.batch(result);
      r.progress.tell();
      await options.onBatch?.({
        index: result.index,
        people: result.people,
        resumed: result.resumed,
        imported: counted.imported,
        rejected: counted.rejected,
      });
    },
    ...(options.signal ? { signal: options.signal } : {}),
    onStop: (waiting) => {
      if (waiting > 0)
        options.logger?.info({ job: r.job, waiting }, "stopping: waiting for the answers of requests sent");
    },
  });
}

/** The phases that need every answer: the rows the service refused (late-rejects.ts), then the warnings (run-warnings.ts). */
async function writeRejectsAndWarnings(r: ImportRun): Promise<void> {
  const { options, counts, files } = r;
  const late = counts.send.refusedRows;
  if (late.size > 0) {
    r.progress.tell("rejects");
    await writeLateRejects(r.csv, late, files.rejects, options.signal, options.parseInWorker);
  }
  counts.warnings = await files.warnings.finish({
    warningsFile: options.warningsFile ?? warningsFileBeside(options.rejectsFile),
    refusedRows: late,
  });
  counts.files.rejectsFile = await files.rejects.close();
  counts.files.requestsFile = await files.requests.close();
  counts.times.finished = Date.now();
}

/** The report, made once from the phases' counts (build-report.ts); the change state and the ledger marked done. */
async function finishRun(r: ImportRun): Promise<ImportReport> {
  const report = r.counts.report();
  await r.gate.sent?.finish();
  await r.ledger?.finish(report);
  r.progress.tell("done");
  const { rowsRead: rows, imported, unchanged, rejected, requests } = report;
  r.options.logger?.info({ job: r.job, rows, imported, unchanged, rejected, requests }, "import finished");
  return report;
}

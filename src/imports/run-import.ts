import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import { type ApiClient, fillPath } from "../api/index.ts";
import type { ImportJobDefinition } from "../config/import-job.ts";
import { RecruitSyncError, runFailure } from "../errors/index.ts";
import { type Batch, type BatchEntry, Batcher, importBody } from "./batch.ts";
import { type Batching, firstBatching, inFlightLimit, restSize } from "./batch-sizing.ts";
import {
  buildImportReport,
  noReadCounts,
  type ReadReportCounts,
  type ReportIdentity,
  type RunTimes,
  skippedReport,
} from "./build-report.ts";
import type { CountMismatch } from "./count-mismatch.ts";
import { hashFile, hashValue } from "./file-hash.ts";
import { identifierSelector } from "./identifier.ts";
import { ImportFileError } from "./import-error.ts";
import { type ImportLedger, type LedgerBatch, openImportLedger } from "./ledger.ts";
import { StreamMerge } from "./merge-phase.ts";
import { type ReadCounts, readAndValidate } from "./read-phase.ts";
import { type CsvSource, openCsv } from "./read-records.ts";
import { GATE_ROWS, refusesFile } from "./refusal-rule.ts";
import { RejectsWriter } from "./rejects-writer.ts";
import type { ImportProgress, ImportReport } from "./report.ts";
import { RequestsWriter } from "./requests-writer.ts";
import { codesOf, type RowProblem, reasonOf } from "./row-problem.ts";
import { quietWarnings, RunWarnings } from "./run-warnings.ts";
import { SendTally } from "./send-counts.ts";
import { type BatchResult, sendBatches } from "./send-phase.ts";
import type { PendingPerson } from "./sent-stamps.ts";
import { openSentState, type SentState, sentStateScope } from "./sent-state.ts";
import { SpillWriter } from "./spill.ts";
import { openSpillFolder } from "./spill-folder.ts";
import { submitBatch } from "./submit-batch.ts";
import { unverifiedMarker } from "./unverified-marker.ts";
import { warningsFileBeside } from "./warnings-file.ts";

export interface BatchProgress {
  index: number;
  people: number;
  /** true when a previous run had finished this batch and it was not sent. */
  resumed: boolean;
  imported: number;
  rejected: number;
}

export interface RunImportOptions {
  file: string;
  definition: ImportJobDefinition;
  /** Name for the report; defaults to the definition's name, else the file's. */
  job?: string;
  /** Required unless dryRun. */
  client?: ApiClient;
  /** Everything but the calls; the bodies go to `requestsFile`. */
  dryRun?: boolean;
  requestsFile?: string;
  /** Where rejected rows go; created only when a row is rejected. */
  rejectsFile: string;
  /** Values `invalidOptionalValues: drop` left out of imported people; default beside the rejects. */
  warningsFile?: string;
  /** The ledger in Redis; without it a run cannot resume or recognise a file it has imported. */
  ledger?: { redis: Redis; prefix: string; ttlSeconds?: number };
  /** Import again a file the ledger says is done, from the first batch. */
  force?: boolean;
  /**
   * Change-only sending (sent-state.ts): people whose mapped data is what the
   * last successful run sent for the same service, token, study, population,
   * identifier and mapping are not sent; `full` sends everyone and records
   * them. Without it everyone is sent and nothing is recorded.
   */
  changes?: ChangeOnlyOptions;
  /** Why change-only sending cannot work this run (no Redis, no token): one warning line; everyone is sent. */
  changesUnavailable?: string;
  /**
   * The file's content hash when the caller already took it (for the run lock's key): the ledger and the
   * lock then name the same bytes, and a large file is not read twice before its first row.
   */
  fileHash?: string;
  /**
   * The folder under which the run makes its private spill folder: `<dataDir>/spill` for the CLI and the workers;
   * default `recruit-sync-spill` in the OS temp directory. Stale spill folders there are removed at start (spill-folder.ts).
   */
  workDir?: string;
  /** The run lock the caller holds for this import (`importLockKey`): names the spill folder, so a rerun finds it. */
  lockKey?: string;
  /** Parse on a worker thread; by default only files of a few megabytes and more are. */
  parseInWorker?: boolean;
  /**
   * Import requests in flight at once, each through the rate governor
   * (config `imports.concurrency`, which the CLI and the workers pass). 1, one
   * after another, when not given. A dry run writes its requests in order.
   */
  concurrency?: number;
  /**
   * Import requests in flight while a rate quota binds (config
   * `imports.concurrencyUnderQuota`), when more than `concurrency`
   * (batch-sizing.ts, inFlightLimit).
   */
  concurrencyUnderQuota?: number;
  /**
   * The most people a request may carry (config `imports.maxBatchSize`), for
   * a service whose limit is lower than the contract's 1,000 (batch-sizing.ts).
   */
  maxBatchSize?: number;
  /**
   * The quota per window the rate governor has seen for this token and
   * service (X-RateLimit-Limit), undefined while it has seen none: under a
   * binding quota requests carry the most people (batch-sizing.ts). Without
   * it batches are of the definition's size.
   */
  quota?: () => Promise<number | undefined>;
  /**
   * Stops the run, which ends `interrupted`: nothing more is read or sent, but
   * the requests already sent are answered and recorded in the ledger before
   * it ends (send-phase.ts), so the resume sends none the service answered.
   * They are waited for until `abandon`, or the client's own timeout.
   */
  signal?: AbortSignal;
  /**
   * After a stop, gives up on the answers still awaited: their requests are
   * aborted, and the resume sends their batches again (the stop's deadline).
   */
  abandon?: AbortSignal;
  onBatch?: (progress: BatchProgress) => void | Promise<void>;
  /**
   * Where the run is, from its first byte: called after every megabyte hashed,
   * every chunk of rows read and every batch sent. Callers throttle.
   */
  onProgress?: (progress: ImportProgress) => void;
  /** Phases and counts only: never a person's data. */
  logger?: Logger;
  /** Hears each person's fate for the run's sync log (src/synclog/person-log.ts). */
  personLog?: { batch(result: BatchResult): void; held(entry: BatchEntry): void };
}

export interface ChangeOnlyOptions {
  redis: Redis | Cluster;
  /** The configured key prefix; the state lives under `<prefix>:sent:`. */
  prefix: string;
  /** The service the people go to, and a fingerprint of the token (tokenFingerprint), never the token. */
  service: { baseUrl: string; tokenFingerprint: string };
  /** Send everyone (`--full`, the job's `changesOnly: false`), and record what was sent. */
  full?: boolean;
  ttlSeconds?: number;
}

const IMPORT_PATH = "/studies/{studyId}/participants/import";

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
 * 4. late rejects (writeLateRejects below), at the end: rows the service
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

/**
 * The run: it owns the ledger, the spill folder, the rejects and requests
 * files and the warnings log, opening them before the phases and closing them
 * in `finally`; the phases only write to them and return their counts, from
 * which buildImportReport makes the report.
 */
async function importFile(options: RunImportOptions, run: RunState): Promise<ImportReport> {
  const started = Date.now();
  const def = options.definition;
  const dryRun = options.dryRun === true;
  const signal = options.signal;
  if (!dryRun && options.client === undefined) {
    throw new RecruitSyncError("usage", "runImport needs a client unless it is a dry run");
  }
  const job = options.job ?? def.name ?? path.basename(options.file).replace(/\.[^.]*$/, "");
  const csv = await openCsv(options.file, def.source);
  const definitionHash = hashValue(def);
  const progress = startProgress(csv.size, options.onProgress);
  options.logger?.info({ job, bytes: csv.size, encoding: csv.encoding, dryRun }, "import started");
  progress.tell();
  const fileHash =
    options.fileHash ??
    (await hashFile(options.file, signal, options.onProgress && ((bytes) => progress.tell("hash", bytes))));
  const times: RunTimes = { started, hashed: Date.now() };

  const full = options.changes?.full === true;
  const opened =
    options.ledger && !dryRun
      ? await openImportLedger({
          ...options.ledger,
          fileHash,
          definitionHash,
          service: options.client?.baseUrl ?? null,
          sendsChangedOnly: options.changes !== undefined && !full,
          force: options.force === true,
          full,
        })
      : undefined;
  if (opened?.done) {
    return skippedReport(opened.done, { job, file: options.file, started, now: Date.now() });
  }
  const ledger = opened?.ledger;

  // ---- the phases' counts, from which the report is built (build-report.ts) ----
  const identity: ReportIdentity = {
    job,
    file: options.file,
    dryRun,
    unmappedAs: def.unmapped,
    encoding: csv.encoding,
    delimiter: csv.delimiter === "\t" ? "tab" : csv.delimiter,
    fileHash,
    definitionHash,
  };
  let readCounts: ReadReportCounts = noReadCounts();
  const tally = new SendTally();
  let warningCounts = quietWarnings(def.invalidOptionalValues ?? "drop");
  let changeState: ImportReport["changeState"];
  let wouldBeRefused: string | undefined;
  const notes: string[] = csv.encodingNote ? [csv.encodingNote] : [];
  const files = { rejectsFile: null as string | null, requestsFile: null as string | null };
  const reportNow = () =>
    buildImportReport({
      identity,
      read: readCounts,
      send: tally.counts(),
      warnings: warningCounts,
      changeState,
      notes,
      files,
      times,
      wouldBeRefused,
    });
  run.report = reportNow;
  progress.counts = () => ({
    rowsRead: readCounts.rowsRead,
    imported: tally.imported,
    rejected: readCounts.rejected + tally.rejected,
    duplicates: tally.duplicates,
    batches: tally.batches,
    batchesResumed: tally.batchesResumed,
    requests: tally.requests,
  });
  progress.tell("read", 0);

  const work = await openSpillFolder({
    root: options.workDir ?? path.join(tmpdir(), "recruit-sync-spill"),
    ...(options.lockKey ? { lockKey: options.lockKey } : {}),
    ...(options.ledger ? { redis: options.ledger.redis } : {}),
  });
  const rejects = new RejectsWriter(options.rejectsFile, undefined, {
    delimiter: csv.delimiter,
    bom: csv.bom,
  });
  const requests = new RequestsWriter(dryRun ? (options.requestsFile ?? null) : null);
  let spill: SpillWriter | undefined;
  // Dropped values and phones without a country: noted per row, written out at the end (run-warnings.ts).
  const runWarnings = new RunWarnings({ workDir: work, policy: def.invalidOptionalValues ?? "drop" });
  // Stops the reading when sending fails.
  const readStop = new AbortController();
  try {
    // What moves the spill's folder: the CLI and the workers put it under paths.dataDir.
    const spillSetting = options.workDir ? "paths.dataDir in the configuration" : "TMPDIR";
    spill = await SpillWriter.create(path.join(work, "rows.spill"), spillSetting);
    const concurrency = dryRun ? 1 : Math.max(1, options.concurrency ?? 1);
    // Raised once the gate sees a binding quota (batch-sizing.ts, inFlightLimit).
    let inFlight = concurrency;
    const sizing = { definitionSize: def.batchSize, maxBatchSize: options.maxBatchSize };
    const batcher = new Batcher(() => undefined);
    const merge = new StreamMerge({
      spill,
      identifier: def.target.identifier,
      batcher,
      sieving: options.changes !== undefined,
      onUnchanged: (entry) => {
        tally.hold(entry);
        options.personLog?.held(entry);
      },
      // A few batches of slack between reading and sending (docs/performance.md has the runs with one, two and six):
      // each waiting batch holds 1,000 people on the main thread's heap, long enough to be promoted.
      maxQueued: () => inFlight + 2,
    });

    // ---- the gate: nothing is sent before the first rows are read and judged ----
    let sent: SentState | undefined;
    let finished = new Map<number, LedgerBatch>();
    let gate: Promise<void> | undefined;
    const openSending = (counts: ReadCounts, bytesRead: number) => {
      times.sending = Date.now();
      const refusal = mostlyRejected(counts, options.rejectsFile, dryRun);
      if (refusal !== undefined && !dryRun) throw new ImportFileError("import_mostly_rejected", refusal);
      // A dry run sends nothing, so nothing stops it: it says what the real run would do instead.
      if (refusal !== undefined)
        wouldBeRefused = `a real run would be refused (import_mostly_rejected): ${refusal}`;
      const valid = counts.rowsRead - counts.rejected;
      const people = bytesRead > 0 ? Math.ceil((valid * csv.size) / bytesRead) : valid;
      const raiseUnderQuota = async () => {
        if (!options.quota || dryRun) return;
        const under = { ...sizing, people, concurrency, underQuota: options.concurrencyUnderQuota };
        inFlight = inFlightLimit(under, await options.quota());
      };
      gate = (async () => {
        if (options.changes) {
          sent = await openSentState({
            redis: options.changes.redis,
            prefix: options.changes.prefix,
            scope: sentStateScope(options.changes.service, def),
            identifier: def.target.identifier,
            mode: full ? "full" : "compare",
            people,
            readOnly: dryRun,
            ...(options.changes.ttlSeconds ? { ttlSeconds: options.changes.ttlSeconds } : {}),
          });
          changeState = sent.changeState;
        } else if (options.changesUnavailable) {
          changeState = "unavailable";
          notes.push(options.changesUnavailable);
        }
        // Batches made after leaving the unchanged out are numbered by what the state held at the
        // start: a run that compares skips none (an interrupted attempt's people are in the state
        // now, not at those numbers), and the ledger records that it compared, so that a retry that
        // cannot compare (the state expired or was lost) does not skip them by index either.
        if (ledger)
          finished = await ledger.start(options.file, sent?.changeState === "compared" ? "compared" : "all");
        const recorded = ledger ? (await ledger.run())?.batching : undefined;
        const b: Batching =
          recorded ??
          firstBatching(
            { ...sizing, people },
            options.quota && !dryRun ? { limit: await options.quota() } : false,
          );
        const sieve = sent ? (p: readonly PendingPerson[]) => (sent as SentState).sieve(p) : undefined;
        if (!b.probe) {
          if (!recorded) await ledger?.setBatching(b);
          await raiseUnderQuota();
          await merge.open(sizesFrom(b), sieve, sent?.sieveAtOnce);
          return;
        }
        // The quota is not known yet: the first request, as full as the people so far make it,
        // goes alone and its answer sizes the rest. Reading waits meanwhile (merge.pause).
        await merge.open(() => undefined, sieve, sent?.sieveAtOnce);
        const first = merge.cutFirst(b.first);
        if (first === undefined) {
          b.rest = b.first;
          await ledger?.setBatching(b);
          merge.resize(sizesFrom(b));
          return;
        }
        if (!recorded) {
          b.first = first.entries.length;
          await ledger?.setBatching(b);
        }
        merge.enqueue(first);
        await firstAnswer.promise;
        if (b.rest === undefined) {
          b.rest = restSize({ ...sizing, people }, await options.quota?.());
          await ledger?.setBatching(b);
        }
        await raiseUnderQuota();
        options.logger?.info({ job, first: b.first, rest: b.rest, inFlight }, "batch sizes decided");
        merge.resize(sizesFrom(b));
      })();
      merge.pause(gate);
      gate.catch((err: unknown) => merge.stop(err));
    };
    const firstAnswer = settleable();

    let failure: { error: unknown } | undefined;
    const selector = identifierSelector(def.target.identifier);
    const sending = sendBatches({
      batches: merge.batches(),
      finished: (index) => finished.get(index),
      concurrency: () => inFlight,
      send: dryRun
        ? writeToRequestsFile(requests, fillPath(IMPORT_PATH, { studyId: def.target.studyId }), selector)
        : sendToService(
            options.client as ApiClient,
            def.target.studyId,
            selector,
            { ledger, sent: () => sent, unverified: unverifiedMarker(options, def, job) },
            // Not the stop: a request on the wire is answered, and recorded, unless the stop's deadline passes.
            options.abandon,
          ),
      onResult: async (result) => {
        firstAnswer.resolve();
        if (result.resumed && sent) {
          const refused = new Set(result.refusedEntries.map((r) => r.entry));
          sent.recordResumed(result.entries.filter((e) => !refused.has(e)));
        }
        const counted = tally.add(result);
        options.personLog?.batch(result);
        progress.tell();
        await options.onBatch?.({
          index: result.index,
          people: result.people,
          resumed: result.resumed,
          imported: counted.imported,
          rejected: counted.rejected,
        });
      },
      ...(signal ? { signal } : {}),
      onStop: (waiting) => {
        if (waiting > 0)
          options.logger?.info({ job, waiting }, "stopping: waiting for the answers of requests sent");
      },
    }).catch((error: unknown) => {
      failure ??= { error };
      firstAnswer.reject(error);
      merge.stop(error);
      readStop.abort(error);
    });

    // ---- read and validate, merging and batching as rows come ----
    const readSignal = signal ? AbortSignal.any([signal, readStop.signal]) : readStop.signal;
    const reading = (async () => {
      const read = await readAndValidate({
        file: options.file,
        csv,
        definition: def,
        spill: merge,
        warnings: runWarnings,
        rejects,
        ...(options.parseInWorker === undefined ? {} : { worker: options.parseInWorker }),
        stamps: options.changes !== undefined,
        signal: readSignal,
        onChunk: (bytesRead, counts) => {
          readCounts = { ...readCounts, ...counts };
          progress.tell("read", bytesRead);
        },
        gate: {
          rows: GATE_ROWS,
          open: (counts, bytesRead) => {
            // The report of a file refused here counts the rows that decided it.
            readCounts = { ...readCounts, ...counts };
            openSending(counts, bytesRead);
          },
        },
      });
      readCounts = {
        ...read.counts,
        unmappedColumns: read.unmappedColumns,
        ignoredColumns: read.ignoredColumns,
      };
      times.read = Date.now();
      options.logger?.info(
        { job, rows: readCounts.rowsRead, rejected: readCounts.rejected + tally.rejected },
        "file read",
      );
      progress.tell("send", csv.size);
      // Out of memory once the file is read: what a killed run leaves is whole on disk, for the rerun to remove.
      await spill?.flush();
      if (gate === undefined) openSending(read.counts, csv.size);
      await gate;
      await merge.end();
    })().catch((error: unknown) => {
      failure ??= { error };
      merge.stop(error);
    });
    await Promise.all([reading, sending]);
    if (failure) {
      // Another run of this scope may finish before the retry and make the state comparable:
      // the people this one got accepted must be in it then, or the retry sends them again.
      await sent?.keep().catch(() => {});
      // The rows rejected so far are the report's to point at: a file refused as mostly rejected is mended from them.
      files.rejectsFile = await rejects.close().catch(() => null);
      throw failure.error;
    }

    // ---- late rejects, then the warnings: the phases that need every answer ----
    const late = tally.refusedRows;
    if (late.size > 0) {
      progress.tell("rejects");
      await writeLateRejects(csv, late, rejects, signal, options.parseInWorker);
    }
    warningCounts = await runWarnings.finish({
      warningsFile: options.warningsFile ?? warningsFileBeside(options.rejectsFile),
      refusedRows: late,
    });
    files.rejectsFile = await rejects.close();
    files.requestsFile = await requests.close();
    times.finished = Date.now();
    const report = reportNow();
    await sent?.finish();
    await ledger?.finish(report);
    progress.tell("done");
    options.logger?.info(
      {
        job,
        rows: report.rowsRead,
        imported: report.imported,
        unchanged: report.unchanged,
        rejected: report.rejected,
        requests: report.requests,
      },
      "import finished",
    );
    return report;
  } finally {
    readStop.abort();
    runWarnings.close();
    await spill?.close().catch(() => {});
    await rejects.close().catch(() => {});
    await requests.close().catch(() => {});
    await rm(work, { recursive: true, force: true });
  }
}

/** A promise and its settling functions (Promise.withResolvers, which Node 20 lacks). */
function settleable(): { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } {
  let resolve = () => {};
  let reject: (err: unknown) => void = () => {};
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/**
 * A file whose first rows (GATE_ROWS, or all of a shorter file of at least
 * JUDGED_FROM_ROWS) are mostly rejected is the wrong file or the wrong
 * mapping: it sends nothing, and the run fails with the rows read so far in
 * the rejects file. Returns why, or undefined for a file that may go on; a
 * dry run is judged by the same rule and says so instead of failing.
 */
export function mostlyRejected(counts: ReadCounts, rejectsFile: string, dryRun = false): string | undefined {
  const missingIdentifier = counts.rejectedByCode.missing_identifier ?? 0;
  if (!refusesFile({ rowsRead: counts.rowsRead, rejected: counts.rejected, missingIdentifier }))
    return undefined;
  const top = Object.entries(counts.rejectedByReason)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([reason, n]) => `${n}× ${reason}`)
    .join("; ");
  const sent = dryRun ? "nothing would be sent" : "nothing was sent";
  return `${counts.rejected} of the first ${counts.rowsRead} rows were rejected (${top.slice(0, 500)}): ${sent}. Is it the right file and mapping? The rejected rows are in ${rejectsFile}`;
}

/** Batch sizes by index from a plan; undefined while the later ones wait for the first answer. */
function sizesFrom(b: Batching): (index: number) => number | undefined {
  return (index) => (index === 0 ? b.first : b.rest);
}

/** The progress handed to onProgress: the phases' counts as they stand, with the phase and bytes. */
function startProgress(bytesTotal: number, tell: ((p: ImportProgress) => void) | undefined) {
  const progress: ImportProgress = {
    kind: "import",
    phase: "hash",
    bytesRead: 0,
    bytesTotal,
    rowsRead: 0,
    imported: 0,
    rejected: 0,
    duplicates: 0,
    batches: 0,
    batchesResumed: 0,
    requests: 0,
  };
  return {
    counts: undefined as (() => ProgressCounts) | undefined,
    tell(phase: ImportProgress["phase"] = progress.phase, bytesRead = progress.bytesRead) {
      if (!tell) return;
      progress.phase = phase;
      progress.bytesRead = bytesRead;
      if (this.counts) Object.assign(progress, this.counts());
      tell({ ...progress });
    },
  };
}

type ProgressCounts = Pick<
  ImportProgress,
  "rowsRead" | "imported" | "rejected" | "duplicates" | "batches" | "batchesResumed" | "requests"
>;

function mergedRows(batch: Batch): number {
  let duplicates = 0;
  for (const e of batch.entries) duplicates += e.rows.length - 1;
  return duplicates;
}

/**
 * Sends a batch to the service and, once answered, records the people it
 * accepted in the change state (those it refused are sent again next time)
 * and the batch in the ledger. `abandon` aborts a request on the wire; a stop
 * of the run only keeps the next ones from going (`sendNoMore`).
 */
function sendToService(
  client: ApiClient,
  studyId: string,
  identifier: string,
  records: {
    ledger: ImportLedger | undefined;
    sent: () => SentState | undefined;
    /** Marks the people of a request whose answer counted otherwise (unverified-people.ts). */
    unverified?:
      | ((batch: Batch, m: CountMismatch, entries: readonly BatchEntry[]) => Promise<void>)
      | undefined;
  },
  abandon: AbortSignal | undefined,
): (batch: Batch, sendNoMore: AbortSignal) => Promise<BatchResult> {
  const { ledger } = records;
  return async (batch, sendNoMore) => {
    const sent = records.sent();
    const outcome = await submitBatch(
      client,
      { studyId, identifier, population: batch.population },
      batch.entries,
      abandon,
      sendNoMore,
    );
    let duplicates = 0;
    for (const e of outcome.imported) duplicates += e.rows.length - 1;
    const rejected = outcome.rejected.map((r) => ({ rows: r.entry.rows, problems: r.problems }));
    const countMismatches = outcome.mismatches.map((m) => ({
      batch: batch.index,
      importId: m.importId,
      sent: m.sent,
      counted: m.counted,
    }));
    for (const [i, m] of outcome.mismatches.entries())
      await records.unverified?.(batch, countMismatches[i] as CountMismatch, m.entries);
    await sent?.record(outcome.imported);
    await ledger?.putBatch(batch.index, {
      status: "done",
      importIds: outcome.importIds,
      imported: outcome.imported.length,
      rejected,
      duplicates,
      at: new Date().toISOString(),
    });
    return {
      entries: batch.entries,
      refusedEntries: outcome.rejected,
      index: batch.index,
      people: batch.entries.length,
      resumed: false,
      importIds: outcome.importIds,
      imported: outcome.imported.length,
      duplicates,
      rejected,
      requests: outcome.requests,
      countMismatch: outcome.countMismatches > 0,
      countMismatches,
    };
  };
}

/** A dry run's "send": the request it would make, written to the requests file. */
function writeToRequestsFile(
  requests: RequestsWriter,
  requestPath: string,
  identifier: string,
): (batch: Batch) => Promise<BatchResult> {
  return async (batch) => {
    await requests.write(
      "importParticipants",
      "POST",
      requestPath,
      importBody(batch.entries, identifier, batch.population),
    );
    return {
      entries: batch.entries,
      refusedEntries: [],
      index: batch.index,
      people: batch.entries.length,
      resumed: false,
      importIds: [],
      imported: batch.entries.length,
      duplicates: mergedRows(batch),
      rejected: [],
      requests: 1,
      countMismatch: false,
    };
  };
}

/** Phase 4: the rows the service refused, their cells read back from the file into the rejects file. */
async function writeLateRejects(
  csv: CsvSource,
  late: ReadonlyMap<number, readonly RowProblem[]>,
  rejects: RejectsWriter,
  signal: AbortSignal | undefined,
  worker: boolean | undefined,
): Promise<void> {
  for await (const chunk of csv.records(signal, worker === undefined ? {} : { worker })) {
    for (let i = 0; i < chunk.length; i++) {
      const problems = late.get(chunk.firstRow + i);
      if (problems === undefined) continue;
      const wait = rejects.write(chunk.firstRow + i, reasonOf(problems), codesOf(problems), chunk.cells(i));
      if (wait) await wait;
    }
  }
}

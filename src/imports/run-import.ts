import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { type ApiClient, fillPath, type ImportPerson, SPEC_DEFAULTS } from "../api/index.ts";
import type { ImportJobDefinition } from "../config/import-job.ts";
import { RecruitSyncError, runFailure } from "../errors/index.ts";
import { type Batch, type BatchEntry, Batcher, batchBody } from "./batch.ts";
import { planColumns } from "./column-plan.ts";
import { dedupeKey, KeyIndex, mergePersons, SeqLinks } from "./dedupe.ts";
import { hashFile, hashValue } from "./file-hash.ts";
import { ImportFileError } from "./import-error.ts";
import { createRedisLedger, type ImportLedger, type LedgerBatch } from "./ledger.ts";
import { createRowMapper, identifierKey, identifierSelector } from "./map-row.ts";
import { openCsv } from "./read-records.ts";
import { RejectsWriter } from "./rejects-writer.ts";
import type { ImportProgress, ImportReport } from "./report.ts";
import { RequestsWriter } from "./requests-writer.ts";
import { reasonOf } from "./row-issue.ts";
import { quietWarningFields, RunWarnings } from "./run-warnings.ts";
import { type SpilledRow, SpillReader, SpillWriter } from "./spill.ts";
import { openSpillFolder } from "./spill-folder.ts";
import { submitBatch } from "./submit-batch.ts";
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
   * The folder under which the run makes its private spill folder: `<dataDir>/spill` for the CLI and the workers;
   * default `recruit-sync-spill` in the OS temp directory. Stale spill folders there are removed at start (spill-folder.ts).
   */
  workDir?: string;
  /** The run lock the caller holds for this import (`importLockKey`): names the spill folder, so a rerun finds it. */
  lockKey?: string;
  /** Parse on a worker thread; by default only files of a few megabytes and more are. */
  parseInWorker?: boolean;
  signal?: AbortSignal;
  onBatch?: (progress: BatchProgress) => void | Promise<void>;
  /**
   * Where the run is, from its first byte: called after every megabyte hashed,
   * every chunk of rows read and every batch sent. Callers throttle.
   */
  onProgress?: (progress: ImportProgress) => void;
  /** Phases and counts only: never a person's data. */
  logger?: Logger;
}

const IMPORT_PATH = "/studies/{studyId}/participants/import";

function isBlank(cells: readonly string[]): boolean {
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i] as string;
    // Most cells start with a visible character: no need to trim them.
    if (c.length > 0 && (c.charCodeAt(0) > 32 || c.trim() !== "")) return false;
  }
  return true;
}

/**
 * Imports one CSV file: decode → parse → map → validate → dedupe → batch →
 * send, with every row accounted for: rowsRead = imported + rejected + duplicates.
 *
 * Two passes keep memory flat while later rows win: the first validates every
 * row, writes the good ones to a private spill file and indexes identifiers in
 * typed arrays; the second reads the spill in order, merges each person's rows
 * at the last of them, and sends batches. Nothing is sent before the whole file
 * has been read, so a file that turns out to be broken imports nothing.
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
    const failure = runFailure(stopped, run.report);
    options.logger?.warn(
      { job: run.report?.job, code: failure.code, retryable: failure.retryable },
      "import failed",
    );
    throw failure;
  }
}

/** The report as it stands, for the error that ends a run. */
interface RunState {
  report: ImportReport | undefined;
}

/** An abort ends a run as `interrupted`, retryable: the ledger lets the next attempt resume. */
function stoppedError(reason: unknown): RecruitSyncError {
  if (reason instanceof RecruitSyncError) return reason;
  const message = reason instanceof Error ? reason.message : "stopped";
  return new RecruitSyncError("interrupted", `interrupted: ${message}`, { cause: reason, retryable: true });
}

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
  const workerOption = options.parseInWorker === undefined ? {} : { worker: options.parseInWorker };
  const definitionHash = hashValue(def);
  const progress: ImportProgress = {
    kind: "import",
    phase: "hash",
    bytesRead: 0,
    bytesTotal: csv.size,
    rowsRead: 0,
    imported: 0,
    rejected: 0,
    duplicates: 0,
    batches: 0,
    batchesResumed: 0,
    requests: 0,
  };
  const tell = options.onProgress;
  options.logger?.info({ job, bytes: csv.size, encoding: csv.encoding, dryRun }, "import started");
  tell?.({ ...progress });
  const fileHash = await hashFile(
    options.file,
    signal,
    tell &&
      ((bytes) => {
        progress.bytesRead = bytes;
        tell({ ...progress });
      }),
  );
  const hashed = Date.now();

  let ledger: ImportLedger | undefined;
  if (options.ledger && !dryRun) {
    // The service is part of the ledger's identity: a rehearsal against the
    // emulator must not make the real import of the same file look done.
    const target = hashValue({ definitionHash, service: options.client?.baseUrl ?? null });
    ledger = createRedisLedger({ ...options.ledger, fileHash, definitionHash: target });
    if (options.force) await ledger.clear();
    const previous = await ledger.run();
    if (previous?.status === "done") {
      const earlier = previous.report as Partial<ImportReport> | undefined;
      return {
        ...(earlier as ImportReport),
        status: "skipped",
        job,
        file: options.file,
        dryRun: false,
        requests: 0,
        startedAt: new Date(started).toISOString(),
        durationMs: Date.now() - started,
        rowsPerSecond: 0,
        warnings: [],
        skippedBecause: `already imported on ${previous.finishedAt ?? previous.startedAt}`,
      };
    }
  }

  const report: ImportReport = {
    kind: "import",
    job,
    file: options.file,
    status: "completed",
    dryRun,
    rowsRead: 0,
    imported: 0,
    rejected: 0,
    duplicates: 0,
    blankRows: 0,
    batches: 0,
    batchesResumed: 0,
    requests: 0,
    importIds: [],
    rejectsFile: null,
    requestsFile: null,
    unmappedColumns: [],
    unmappedAs: def.unmapped,
    ignoredColumns: [],
    rejectedByReason: {},
    ...quietWarningFields(def.invalidOptionalValues),
    encoding: csv.encoding,
    delimiter: csv.delimiter === "\t" ? "tab" : csv.delimiter,
    fileHash,
    definitionHash,
    warnings: [],
    startedAt: new Date(started).toISOString(),
    durationMs: 0,
    phasesMs: { hash: hashed - started, read: 0, send: 0 },
    rowsPerSecond: 0,
  };
  run.report = report;
  /** The report's counts, copied into the progress and handed on. */
  const tellProgress = (phase: ImportProgress["phase"], bytesRead = progress.bytesRead) => {
    if (!tell) return;
    progress.phase = phase;
    progress.bytesRead = bytesRead;
    progress.rowsRead = report.rowsRead;
    progress.imported = report.imported;
    progress.rejected = report.rejected;
    progress.duplicates = report.duplicates;
    progress.batches = report.batches;
    progress.batchesResumed = report.batchesResumed;
    progress.requests = report.requests;
    tell({ ...progress });
  };
  tellProgress("read", 0);
  const countReason = (reason: string, rows: number) => {
    report.rejectedByReason[reason] = (report.rejectedByReason[reason] ?? 0) + rows;
  };

  const work = await openSpillFolder({
    root: options.workDir ?? path.join(tmpdir(), "recruit-sync-spill"),
    ...(options.lockKey ? { lockKey: options.lockKey } : {}),
    ...(options.ledger ? { redis: options.ledger.redis } : {}),
  });
  let rejects: RejectsWriter | undefined;
  const requests = new RequestsWriter(dryRun ? (options.requestsFile ?? null) : null);
  let reader: SpillReader | undefined;
  let spill: SpillWriter | undefined;
  // Dropped values and phones without a country: noted per row, written out at the end (run-warnings.ts).
  const runWarnings = new RunWarnings({ workDir: work, policy: def.invalidOptionalValues ?? "reject" });
  try {
    // ---- pass 1: read, map, validate, index ----
    const spillPath = path.join(work, "rows.spill");
    spill = await SpillWriter.create(spillPath);
    const spilled = spill;
    const index = new KeyIndex();
    const links = new SeqLinks();
    const identifier = def.target.identifier;
    let skipped = 0;
    let mapRow: ReturnType<typeof createRowMapper> | undefined;
    let writer: RejectsWriter | undefined;

    /** Takes one row; returns a promise only when a file write must be waited for. */
    const take = (cells: string[], row: number): Promise<void> | undefined => {
      if (isBlank(cells)) {
        report.blankRows++;
        return undefined;
      }
      report.rowsRead++;
      const mapped = (mapRow as NonNullable<typeof mapRow>)(cells, row);
      runWarnings.take(row, mapped);
      if (!mapped.ok) {
        const reason = reasonOf(mapped.issues);
        report.rejected++;
        countReason(reason, 1);
        return writer?.write(row, reason, cells);
      }
      // (population, identifier): the service matches within the population, so the same email in two is two people.
      links.push(index.put(dedupeKey(mapped.population, mapped.key), spilled.count));
      return spilled.append(row, mapped.population, JSON.stringify(mapped.person));
    };

    for await (const chunk of csv.records(signal, workerOption)) {
      for (let i = 0; i < chunk.length; i++) {
        const cells = chunk.cells(i);
        const row = chunk.firstRow + i;
        if (mapRow === undefined) {
          if (skipped < def.source.skipRows) {
            skipped++;
            continue;
          }
          if (isBlank(cells)) {
            report.blankRows++;
            continue;
          }
          const headers = def.source.header ? cells : cells.map((_c, k) => `column${k + 1}`);
          const plan = planColumns(headers, def);
          report.unmappedColumns = plan.unmapped;
          report.ignoredColumns = plan.ignored;
          mapRow = createRowMapper(plan, def);
          writer = new RejectsWriter(options.rejectsFile, plan.headers);
          rejects = writer;
          if (def.source.header) continue;
        }
        const wait = take(cells, row);
        if (wait) await wait;
      }
      tellProgress("read", chunk.bytesRead);
    }
    if (mapRow === undefined) {
      throw new ImportFileError(
        "file_empty",
        `${options.file} has no header row: there is nothing to import`,
      );
    }
    const offsets = await spilled.close();
    const read = Date.now();
    report.phasesMs.read = read - hashed;
    options.logger?.info({ job, rows: report.rowsRead, rejected: report.rejected }, "file read");
    tellProgress("send", csv.size);
    if (report.rowsRead === 0) report.warnings.push("the file has a header but no rows");

    // ---- pass 2: merge duplicates at their last row, batch, send ----
    const done = ledger ? await ledger.batches() : new Map<number, LedgerBatch>();
    await ledger?.start(options.file);
    reader = new SpillReader(spillPath, offsets, spilled.populations);
    const spillReader = reader;
    const batcher = new Batcher(def.batchSize);
    const selector = identifierSelector(identifier);
    const requestPath = fillPath(IMPORT_PATH, { studyId: def.target.studyId });

    // Rows refused after validation are rare: their cells are read back from the file at the end.
    const late = new Map<number, string>();
    const rejectLate = (rows: readonly number[], reason: string) => {
      for (const row of rows) late.set(row, reason);
      report.rejected += rows.length;
      countReason(reason, rows.length);
    };

    const handle = async (batch: Batch) => {
      signal?.throwIfAborted();
      report.batches++;
      const people = batch.entries.length;
      const finished = done.get(batch.index);
      if (finished) {
        report.batchesResumed++;
        report.imported += finished.imported;
        report.duplicates += finished.duplicates;
        report.importIds.push(...finished.importIds);
        let rejectedRows = 0;
        for (const r of finished.rejected) {
          rejectLate(r.rows, r.reason);
          rejectedRows += r.rows.length;
        }
        tellProgress("send");
        await options.onBatch?.({
          index: batch.index,
          people,
          resumed: true,
          imported: finished.imported,
          rejected: rejectedRows,
        });
        return;
      }
      if (dryRun) {
        const body = batchBody(
          batch.entries,
          SPEC_DEFAULTS.importIdentifierField,
          selector,
          SPEC_DEFAULTS.importPopulationField,
          batch.population,
        );
        await requests.write("importParticipants", "POST", requestPath, body);
        report.requests++;
        report.imported += people;
        for (const e of batch.entries) report.duplicates += e.rows.length - 1;
        tellProgress("send");
        await options.onBatch?.({
          index: batch.index,
          people,
          resumed: false,
          imported: people,
          rejected: 0,
        });
        return;
      }
      const outcome = await submitBatch(
        options.client as ApiClient,
        { studyId: def.target.studyId, identifier: selector, population: batch.population },
        batch.entries,
        signal,
      );
      let duplicates = 0;
      for (const e of outcome.imported) duplicates += e.rows.length - 1;
      let rejectedRows = 0;
      for (const r of outcome.rejected) {
        rejectLate(r.entry.rows, r.reason);
        rejectedRows += r.entry.rows.length;
      }
      report.requests += outcome.requests;
      report.imported += outcome.imported.length;
      report.duplicates += duplicates;
      report.importIds.push(...outcome.importIds);
      if (outcome.countMismatches > 0) {
        report.warnings.push(
          `batch ${batch.index}: the service counted a different number of people than were sent`,
        );
      }
      tellProgress("send");
      await ledger?.putBatch(batch.index, {
        status: "done",
        importIds: outcome.importIds,
        imported: outcome.imported.length,
        rejected: outcome.rejected.map((r) => ({ rows: r.entry.rows, reason: r.reason })),
        duplicates,
        at: new Date().toISOString(),
      });
      await options.onBatch?.({
        index: batch.index,
        people,
        resumed: false,
        imported: outcome.imported.length,
        rejected: rejectedRows,
      });
    };

    const add = (population: string | null, entry: BatchEntry): Promise<void> | undefined => {
      const full = batcher.add(population, entry);
      return full ? handle(full) : undefined;
    };

    await spillReader.each(signal, (s, row, population, person) => {
      if (links.isSuperseded(s)) return undefined;
      if (links.prev(s) === -1) return add(population, { rows: [row], person });
      return mergeAt(s, { row, population, person });
    });

    async function mergeAt(s: number, row: SpilledRow): Promise<void> {
      // The last row of a person: gather the earlier ones and merge, earliest first.
      const chain: number[] = [];
      for (let p = links.prev(s); p !== -1; p = links.prev(p)) chain.push(p);
      chain.reverse();
      const rows = [...chain.map((p) => spillReader.row(p)), row];
      // Rows that share a hash but not a key (a 64-bit collision) stay separate people.
      const groups = new Map<string, typeof rows>();
      for (const r of rows) {
        const key = dedupeKey(
          r.population,
          identifierKey(JSON.parse(r.person) as ImportPerson, identifier) ?? "",
        );
        const g = groups.get(key);
        if (g) g.push(r);
        else groups.set(key, [r]);
      }
      for (const group of groups.values()) {
        let person = JSON.parse((group[0] as (typeof rows)[number]).person) as ImportPerson;
        for (const r of group.slice(1)) person = mergePersons(person, JSON.parse(r.person) as ImportPerson);
        const lastRow = group[group.length - 1] as (typeof rows)[number];
        await add(lastRow.population, {
          rows: group.map((r) => r.row),
          person: JSON.stringify(person),
        });
      }
    }
    for (const batch of batcher.finish()) await handle(batch);

    if (late.size > 0) {
      tellProgress("rejects");
      for await (const chunk of csv.records(signal, workerOption)) {
        for (let i = 0; i < chunk.length; i++) {
          const reason = late.get(chunk.firstRow + i);
          if (reason === undefined) continue;
          const wait = rejects?.write(chunk.firstRow + i, reason, chunk.cells(i));
          if (wait) await wait;
        }
      }
    }
    await runWarnings.finish(report, {
      warningsFile: options.warningsFile ?? warningsFileBeside(options.rejectsFile),
      refusedRows: late,
    });
    report.rejectsFile = (await rejects?.close()) ?? null;
    rejects = undefined;
    report.requestsFile = await requests.close();
    if (report.imported + report.rejected + report.duplicates !== report.rowsRead) {
      report.warnings.push(
        `counts do not add up: ${report.rowsRead} rows read, ${report.imported} + ${report.rejected} + ${report.duplicates} accounted for`,
      );
    }
    report.durationMs = Date.now() - started;
    report.phasesMs.send = Date.now() - read;
    report.rowsPerSecond = Math.round(report.rowsRead / Math.max(report.durationMs / 1000, 0.001));
    await ledger?.finish(report);
    tellProgress("done");
    options.logger?.info(
      {
        job,
        rows: report.rowsRead,
        imported: report.imported,
        rejected: report.rejected,
        requests: report.requests,
      },
      "import finished",
    );
    return report;
  } finally {
    await reader?.close();
    runWarnings.close();
    await spill?.close().catch(() => {});
    await rejects?.close().catch(() => {});
    await requests.close().catch(() => {});
    await rm(work, { recursive: true, force: true });
  }
}

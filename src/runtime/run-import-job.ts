import { constants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import path from "node:path";
import type { FileJobDefinition } from "../config/import-job.ts";
import type { RuntimeConfig } from "../config/index.ts";
import type { RateGovernor } from "../governor/index.ts";
import {
  type ChangeOnlyOptions,
  hashFile,
  hashValue,
  ImportFileError,
  type ImportProgress,
  type ImportReport,
  type OptOutReport,
  runImport,
  runOptOut,
  tokenFingerprint,
} from "../imports/index.ts";
import { type ImportDefinitionRequest, resolveImportDefinition } from "./import-definition.ts";
import { allowedImportFile, type FileGiven } from "./import-file-access.ts";
import { ImportRunLog } from "./import-run-log.ts";
import { asRedis, connectRedis, type RedisConnection, safeRedisUrl } from "./redis-connection.ts";
import { openRunResources, type RunContext, type RunResources } from "./run-context.ts";
import { importLockKey, joinSignals, withRunLocks } from "./run-lock.ts";
import { claimRunId, releaseRunId, unfinishedRunKey } from "./unfinished-run.ts";

/** One import (or opt-out list) to run, as any way in asks for it. */
export interface ImportRunRequest extends ImportDefinitionRequest {
  /** A regular file this process can read (the CLI spools standard input first). */
  file: string;
  /**
   * Who gave the file: the person at a shell (any file they can read), or a
   * queue job (a file under the import roots, or one the CLI signed).
   * Default: a queue job without a grant, the narrowest.
   */
  given?: FileGiven;
  /** The file's name for people (a watched file's own name, not its processing/ path). */
  displayName?: string;
  dryRun?: boolean;
  /** Import again a file the ledger says was imported with this definition. */
  force?: boolean;
  /** Send everyone, not only the people changed since the last run (`--full`). */
  full?: boolean;
  /** Names the run's output files beside the job's name: a queue job's id, or the CLI's start time. */
  runId: string;
  /**
   * Carry on the run of this file and definition that did not finish (killed, stopped, failed)
   * under its run id, when there is one: its sync_log rows are replaced and its files taken over,
   * rather than left beside this run's. The CLI's inline runs; a queue job keeps its own id across
   * attempts, and two ways in never share one (unfinished-run.ts).
   */
  resumeUnfinished?: boolean;
  /** Where rejected rows go; default `<dataDir>/imports/<job>-<runId>.rejects.csv`. */
  rejectsFile?: string;
  /** A dry run's requests; default beside the rejects. */
  requestsFile?: string;
}

export interface ImportRunCallbacks {
  /** Where the run is, from its first byte, with what it waited on the budget so far. Callers throttle. */
  onProgress?: (progress: ImportProgress, budgetWaitMs: number) => void;
}

export interface ImportRunOutcome {
  report: ImportReport | OptOutReport;
  /** Time this run waited on the shared rate budget. */
  budgetWaitMs: number;
}

/** `<dataDir>/imports/<job>-<runId>.*`, in a folder only its owner reads: rejects hold people's rows. */
async function outputFiles(dataDir: string, name: string, request: ImportRunRequest, runId: string) {
  const dir = path.resolve(dataDir, "imports");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const base = path.join(dir, `${name}-${runId}`);
  return {
    rejectsFile: path.resolve(request.rejectsFile ?? `${base}.rejects.csv`),
    requestsFile: path.resolve(request.requestsFile ?? `${base}.requests.jsonl`),
    /** The run's people for sync_log, until they are loaded (digests only, no email or phone). */
    logFile: `${base}.sync-log.csv`,
  };
}

async function ensureReadable(file: string): Promise<void> {
  await access(file, constants.R_OK).catch((err: NodeJS.ErrnoException) => {
    throw new ImportFileError(
      "file_unreadable",
      `cannot read ${file} (${err.code ?? err.message}): whoever runs the import (a worker, on its own disk) must see that path`,
      { cause: err },
    );
  });
}

/**
 * Runs one import or opt-out list, whichever way it came in: resolves the
 * definition, opens the service client and Redis, takes the run lock of
 * (file bytes, definition) so two runs never send the same batches, keeps the
 * ledger so a rerun resumes, and returns the report. A dry run needs neither
 * the service nor a lock.
 *
 * @example
 * const { report } = await runImportJob(
 *   { file: "samples/hubspot-contacts.csv", job: "hubspot-contacts", runId: "manual" },
 *   { config, holder: `pid ${process.pid}` },
 * );
 */
export async function runImportJob(
  request: ImportRunRequest,
  ctx: RunContext,
  callbacks: ImportRunCallbacks = {},
): Promise<ImportRunOutcome> {
  const { config } = ctx;
  const { definition, name } = await resolveImportDefinition(request, config.paths.jobsDir);
  // Checked before the file is opened; from here on only the resolved path is read.
  const file = await allowedImportFile(config, request.file, request.given ?? { by: "queue" });
  await ensureReadable(file);
  const dryRun = request.dryRun === true;
  const resources = await openRunResources(ctx, {
    redis: !dryRun && definition.kind === "import",
    service: !dryRun,
    why: "the import ledger lives there",
  });
  // A dry run counts the unchanged from the state when Redis answers, and says so when it does not.
  const dryRedis =
    dryRun && definition.kind === "import" && !resources.redis
      ? await connectRedis(config, "the change-only state").catch(() => undefined)
      : undefined;
  const run: ImportRun = {
    request,
    ctx,
    callbacks,
    definition,
    name,
    file,
    resources,
    changeState: resources.redis ?? dryRedis,
  };
  try {
    const report = await (dryRun || !resources.redis ? unlocked(run) : underImportLock(run, resources.redis));
    return { report, budgetWaitMs: resources.service?.budget.waitedMs ?? 0 };
  } catch (err) {
    // Ended before it had its run id (another run holds the lock, say): logged under the way in's.
    if (!run.opened) await failedBeforeOpen(run, err);
    throw err;
  } finally {
    dryRedis?.disconnect();
    await resources.close();
  }
}

/** What one import run resolved and opened, for its pipeline to run with. */
interface ImportRun {
  request: ImportRunRequest;
  ctx: RunContext;
  callbacks: ImportRunCallbacks;
  definition: FileJobDefinition;
  name: string;
  /** The file as checked: the only path read. */
  file: string;
  resources: RunResources;
  /** Where the change-only state is read: the run's Redis, or for a dry run one opened for it alone. */
  changeState: RedisConnection | undefined;
  /** Set by openRun once the run id is known: under the run lock, for a run that takes one. */
  opened?: OpenedRun;
}

/** The run's files and log, named by its run id. */
interface OpenedRun {
  outputs: { rejectsFile: string; requestsFile: string; logFile: string };
  runLog: ImportRunLog | undefined;
}

/** Names the run's files and opens its log, under `runId`: the way in's, or an unfinished run's. */
async function openRun(run: ImportRun, runId: string): Promise<OpenedRun> {
  const { ctx, name, definition, file } = run;
  const outputs = await outputFiles(ctx.config.paths.dataDir, name, run.request, runId);
  const runLog =
    run.request.dryRun === true
      ? undefined
      : runLogOf(ctx, { runId: `${name}-${runId}`, name, definition, file, logFile: outputs.logFile });
  run.opened = { outputs, runLog };
  return run.opened;
}

/** A dry run, or one without a run lock (an opt-out list): under the way in's run id. */
async function unlocked(run: ImportRun): Promise<ImportReport | OptOutReport> {
  const opened = await openRun(run, run.request.runId);
  return logged(run, opened.runLog, () => runPipeline(run, opened));
}

/** A run that failed before it opened its log: its sync_runs row, unless the log cannot be opened either. */
async function failedBeforeOpen(run: ImportRun, err: unknown): Promise<void> {
  const opened = await openRun(run, run.request.runId).catch(() => undefined);
  await opened?.runLog?.failed(err, run.ctx.signal?.aborted === true);
}

/** Runs the pipeline and tells the run's log how it ended. */
async function logged(
  run: ImportRun,
  runLog: ImportRunLog | undefined,
  work: () => Promise<ImportReport | OptOutReport>,
): Promise<ImportReport | OptOutReport> {
  let report: ImportReport | OptOutReport;
  try {
    report = await work();
  } catch (err) {
    await runLog?.failed(err, run.ctx.signal?.aborted === true);
    throw err;
  }
  await runLog?.finished(report);
  return report;
}

/** The run's rows in sync_runs and sync_log (src/synclog): every way in comes through here. */
function runLogOf(
  ctx: RunContext,
  run: { runId: string; name: string; definition: FileJobDefinition; file: string; logFile: string },
): ImportRunLog | undefined {
  if (!ctx.config.syncLog.enabled) return undefined;
  const { definition } = run;
  const target = definition.kind === "import" ? definition.target : undefined;
  return new ImportRunLog(
    ctx.config,
    {
      runId: run.runId,
      job: run.name,
      kind: definition.kind === "import" ? "import" : "opt_out",
      studyId: target?.studyId ?? null,
      identifier: target?.identifier ?? null,
      file: run.file,
      logFile: run.logFile,
      populations: target?.population !== undefined,
    },
    ctx.logger,
  );
}

/** The pipeline under the run lock of (file bytes, definition), its log written before the lock is freed. */
async function underImportLock(run: ImportRun, redis: RedisConnection): Promise<ImportReport | OptOutReport> {
  const { config, signal, holder } = run.ctx;
  // The lock's key also names the spill folder, so the rerun of a killed import finds what it left.
  const fileHash = await hashFile(run.file, signal);
  const definitionHash = hashValue(run.definition);
  const lockKey = importLockKey(config.redis.prefix, fileHash, definitionHash);
  const what = `an import of ${run.request.displayName ?? path.basename(run.request.file)} with ${run.name}`;
  return withRunLocks({ redis, holder, leaseMs: config.queue.lockMs }, [{ key: lockKey, what }], (lost) =>
    lockedRun(run, redis, { lockKey, fileHash, definitionHash, lost }),
  );
}

/**
 * A run holding its lock: takes its run id (an unfinished run's, for a run
 * that resumes one), runs and logs, and gives that id up once it succeeds:
 * the next run of the file is a run of its own.
 */
async function lockedRun(
  run: ImportRun,
  redis: RedisConnection,
  locked: { lockKey: string; fileHash: string; definitionHash: string; lost: AbortSignal | undefined },
): Promise<ImportReport | OptOutReport> {
  const { fileHash } = locked;
  const runIdKey = unfinishedRunKey(run.ctx.config.redis.prefix, fileHash, locked.definitionHash);
  const claim = run.request.resumeUnfinished
    ? await claimRunId(redis, runIdKey, run.request.runId)
    : undefined;
  const runId = claim?.runId ?? run.request.runId;
  if (claim?.resumed) {
    run.ctx.logger?.info(
      { job: run.name, runId: `${run.name}-${runId}` },
      "carrying on the unfinished run of this file",
    );
  }
  const opened = await openRun(run, runId);
  opened.runLog?.fileHash(fileHash);
  const report = await logged(run, opened.runLog, () =>
    runPipeline(run, opened, { lockKey: locked.lockKey, fileHash, lost: locked.lost }),
  );
  if (claim) await releaseRunId(redis, runIdKey);
  return report;
}

/** Runs the import, or the opt-out list, with what the run opened; `locked` when it holds the run lock. */
function runPipeline(
  run: ImportRun,
  opened: OpenedRun,
  locked?: { lockKey: string; fileHash: string; lost: AbortSignal | undefined },
): Promise<ImportReport | OptOutReport> {
  const { request, ctx, definition, resources } = run;
  const { config } = ctx;
  const signal = joinSignals(ctx.signal, locked?.lost);
  const common = {
    file: run.file,
    job: run.name,
    ...(resources.service ? { client: resources.service.client } : {}),
    dryRun: request.dryRun === true,
    rejectsFile: opened.outputs.rejectsFile,
    requestsFile: opened.outputs.requestsFile,
    ...(signal ? { signal } : {}),
  };
  if (definition.kind !== "import")
    return runOptOut({
      ...common,
      definition,
      ...(opened.runLog?.people ? { personLog: opened.runLog.people } : {}),
    });
  return runImport({
    ...common,
    definition,
    ...(resources.redis ? { ledger: { redis: asRedis(resources.redis), prefix: config.redis.prefix } } : {}),
    workDir: path.resolve(config.paths.dataDir, "spill"),
    ...(locked ? { lockKey: locked.lockKey, fileHash: locked.fileHash } : {}),
    force: request.force === true,
    ...changeOnly(config, run.changeState, request.full === true || definition.changesOnly === false),
    concurrency: config.imports.concurrency,
    concurrencyUnderQuota: config.imports.concurrencyUnderQuota,
    ...(config.imports.maxBatchSize ? { maxBatchSize: config.imports.maxBatchSize } : {}),
    ...(resources.service?.governor ? { quota: quotaOf(resources.service.governor) } : {}),
    ...(ctx.abandon ? { abandon: ctx.abandon } : {}),
    ...(ctx.logger ? { logger: ctx.logger } : {}),
    ...(opened.runLog?.people ? { personLog: opened.runLog.people } : {}),
    onProgress: (p) => run.callbacks.onProgress?.(p, resources.service?.budget.waitedMs ?? 0),
  });
}

/** The quota per window the governor has seen for the run's token and service; undefined before any answer. */
function quotaOf(governor: RateGovernor): () => Promise<number | undefined> {
  return async () => (await governor.state()).limit;
}

/**
 * Where change-only sending keeps its state (src/imports/sent-state.ts), or
 * why it cannot this run. Only a dry run can lack Redis: a real import does
 * not start without it (the ledger lives there).
 */
function changeOnly(
  config: RuntimeConfig,
  redis: RedisConnection | undefined,
  full: boolean,
): { changes: ChangeOnlyOptions } | { changesUnavailable: string } {
  const token = config.service.token;
  if (!redis) {
    return {
      changesUnavailable: `no Redis at ${safeRedisUrl(config.redis.url)}: cannot tell who is unchanged since the last run, so everyone is counted as sent`,
    };
  }
  if (!token) {
    return {
      changesUnavailable:
        "no API token (RECRUIT_SYNC_API_TOKEN): cannot tell who is unchanged since the last run, so everyone is counted as sent",
    };
  }
  return {
    changes: {
      redis,
      prefix: config.redis.prefix,
      service: { baseUrl: config.service.baseUrl, tokenFingerprint: tokenFingerprint(token) },
      full,
    },
  };
}

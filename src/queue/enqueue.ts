import { existsSync, statSync } from "node:fs";
import path from "node:path";
import type { Job, Queue } from "bullmq";
import type { RuntimeConfig } from "../config/index.ts";
import { describeProblems, type Problem, UsageError } from "../errors/index.ts";
import { ImportFileError } from "../imports/index.ts";
import { allowedImportFile, grantImportFile } from "../runtime/import-file-access.ts";
import { resolveExportDefinition, resolveImportDefinition } from "../runtime/index.ts";
import { grantWarehouse } from "../runtime/warehouse-grant.ts";
import {
  ExportJobData,
  type ExportJobDataInput,
  ImportJobData,
  type ImportJobDataInput,
  parseJobData,
} from "./job-data.ts";
import { exportJobId, importJobId } from "./job-ids.ts";
import { JobProgress } from "./job-progress.ts";
import { jobReport } from "./job-report.ts";
import { lostJobWatch, queueEpoch } from "./lost-job.ts";
import { priorityOf, type Queues } from "./queues.ts";

export interface Enqueued {
  jobId: string;
  /** The same file and definition were already queued or done: nothing new was added. */
  duplicate: boolean;
  state: string;
  /** The Redis data epoch before the job was added: hand it to followJob, so a Redis that loses its data right after the add is told apart from a removal. */
  epoch: string;
  /**
   * On a duplicate: the job already under this id reads this very file (a
   * worker restarted after a crash finds its own job), not the same bytes
   * under another name.
   */
  sameFile?: boolean;
}

function refuse(problems: readonly Problem[]): never {
  throw new UsageError(`invalid job: ${describeProblems(problems)}`, problems);
}

function noSuchFile(file: string): never {
  throw new UsageError(`no such file: ${file}`, [{ path: "file", message: `no such file: ${file}` }]);
}

export interface EnqueueImportOptions {
  /**
   * The person at a shell named the file (`recruit-sync import FILE`): any
   * file they can read, signed with the API token so the worker reads it
   * too. Never for a path that came over the network.
   */
  givenAtShell?: boolean;
}

/**
 * Checks an import request as the worker will (data schema, definition,
 * file) and adds it to the `imports` queue under its deterministic id. The
 * file must be readable by the workers at the same path, and lie under the
 * import roots unless the shell gave it (src/runtime/import-file-access.ts):
 * a file elsewhere is refused before it is opened (`file_not_allowed`).
 */
export async function enqueueImport(
  config: RuntimeConfig,
  queues: Pick<Queues, "imports">,
  input: Omit<ImportJobDataInput, "kind">,
  options: EnqueueImportOptions = {},
): Promise<Enqueued> {
  const file = path.resolve(input.file);
  const { fileGrant: _untrusted, ...request } = input;
  const parsed = parseJobData(ImportJobData, { ...request, kind: "import", file });
  if (!parsed.ok) refuse(parsed.problems);
  const exists = () => existsSync(file) && statSync(file).isFile();
  let granted: string | undefined;
  if (options.givenAtShell) {
    if (!exists()) noSuchFile(file);
    granted = grantImportFile(config, await allowedImportFile(config, file, { by: "shell" }));
  }
  // The worker's own check, made here first: refused before anything opens the file or says it exists.
  await allowedImportFile(config, file, { by: "queue", grant: granted }).catch((err: unknown) => {
    // Missing under a root: said as the CLI and the ops API have always said it.
    if (err instanceof ImportFileError && err.code === "file_unreadable") {
      noSuchFile(file);
    }
    if (!options.givenAtShell || granted) throw err;
    throw new ImportFileError(
      "file_not_allowed",
      `refused ${file}: the workers read a file named at a shell only when recruit-sync import signs it with the API token, and RECRUIT_SYNC_API_TOKEN is not set; set it, run with --inline, or add the file's folder to imports.roots in the configuration`,
    );
  });
  const data = { ...parsed.data, ...(granted ? { fileGrant: granted } : {}) };
  if (!exists()) noSuchFile(file);
  const { definition } = await resolveImportDefinition(data, config.paths.jobsDir);
  const { jobId } = await importJobId(file, definition, config.service.baseUrl, data);
  const epoch = await queueEpoch(queues.imports);
  const existing = await queues.imports.getJob(jobId);
  if (existing) {
    const state = await existing.getState();
    if (state !== "failed")
      return { jobId, duplicate: true, state, epoch, sameFile: existing.data.file === file };
    // Asked again after a failure: the new request is the retry.
    await existing.remove();
  }
  const added = await queues.imports.add("import", data, { jobId, priority: priorityOf(data.origin) });
  // BullMQ answers an id taken in the meantime with a job built from our data: only the stored job tells whose it is.
  const stored = await queues.imports.getJob(added.id ?? jobId);
  if (stored && stored.data.file !== file) {
    return { jobId, duplicate: true, state: await stored.getState(), epoch, sameFile: false };
  }
  return { jobId, duplicate: false, state: "waiting", epoch };
}

/** Checks an export request as the worker will and adds it to the `exports` queue. */
export async function enqueueExport(
  config: RuntimeConfig,
  queues: Queues,
  input: Omit<ExportJobDataInput, "kind">,
): Promise<Enqueued> {
  const parsed = parseJobData(ExportJobData, { ...input, kind: "export" });
  if (!parsed.ok) refuse(parsed.problems);
  const {
    warehouseGrant: _untrusted,
    definitionGrant: _unsigned,
    incentiveIdsGrant: _unproven,
    ...data
  } = parsed.data;
  if (data.definition)
    refuse([{ path: "definition", message: "name a job of jobs/: a whole definition is a schedule's" }]);
  await resolveExportDefinition(data, config.paths.jobsDir);
  const jobId = exportJobId(data.job);
  // Whoever enqueues through here holds the API token: the worker lets its warehouse override through.
  const grant = data.warehouse === undefined ? undefined : grantWarehouse(config, data.warehouse);
  // Its ids file too: the worker reads one outside the import roots only with this signature.
  const idsGrant =
    data.incentiveIdsFile === undefined
      ? undefined
      : grantImportFile(config, await allowedImportFile(config, data.incentiveIdsFile, { by: "shell" }));
  const epoch = await queueEpoch(queues.exports);
  await queues.exports.add(
    "export",
    {
      ...data,
      ...(grant ? { warehouseGrant: grant } : {}),
      ...(idsGrant ? { incentiveIdsGrant: idsGrant } : {}),
    },
    {
      jobId,
      priority: priorityOf(data.origin),
    },
  );
  return { jobId, duplicate: false, state: "waiting", epoch };
}

/** How often a followed job that waits asks Redis whether any worker serves its queue. */
const NO_WORKER_CHECK_MS = 2000;

/** True when no worker is connected to the queue (BullMQ lists them from CLIENT LIST); false when that cannot be asked. */
async function noWorkerServes(queue: Queue): Promise<boolean> {
  try {
    return (await queue.getWorkersCount()) === 0;
  } catch {
    // Some managed Redis services refuse CLIENT LIST: then say nothing rather than something false.
    return false;
  }
}

export interface JobEnd {
  state: "completed" | "failed";
  returnvalue: unknown;
  failedReason: string | undefined;
  progress: JobProgress | undefined;
  /** Its report, completed or failed (jobReport). */
  report: unknown;
}

/**
 * Follows a job to its end, calling `onUpdate` whenever its state or
 * progress changes. Polls twice a second: simple, and it survives a Redis
 * restart or a worker moving the job to delayed and back.
 */
export async function followJob(
  queue: Queue,
  jobId: string,
  onUpdate: (state: string, progress: JobProgress | undefined, job: Job) => void,
  options: { signal?: AbortSignal; epoch?: string } = {},
): Promise<JobEnd> {
  const { signal } = options;
  let last = "";
  let workersAskedAt = Number.NEGATIVE_INFINITY;
  let nobody = false;
  const lost = await lostJobWatch(queue, jobId, options.epoch, signal);
  for (;;) {
    signal?.throwIfAborted();
    const job = (await queue.getJob(jobId)) ?? (await lost.missing());
    const state = await job.getState();
    const parsed = JobProgress.safeParse(job.progress);
    let progress = parsed.success ? parsed.data : undefined;
    if (state !== "active" && state !== "completed" && state !== "failed") {
      if (Date.now() - workersAskedAt >= NO_WORKER_CHECK_MS) {
        workersAskedAt = Date.now();
        nobody = await noWorkerServes(queue);
      }
      if (nobody) {
        const message = `no worker serves the ${queue.name} queue under prefix ${queue.opts.prefix ?? "bull"}: start one with 'recruit-sync worker' (same configuration), or run with --inline`;
        progress = progress ? { ...progress, message } : { kind: "pending", budgetWaitMs: 0, message };
      }
    }
    const key = `${state}|${JSON.stringify(progress ?? job.progress)}`;
    if (key !== last) {
      last = key;
      onUpdate(state, progress, job);
    }
    if (state === "completed" || state === "failed") {
      // The job may have ended between getJob and getState: read it again so its result is the final one.
      const done = (await queue.getJob(jobId)) ?? job;
      const final = JobProgress.safeParse(done.progress);
      const end = {
        state,
        returnvalue: done.returnvalue,
        failedReason: done.failedReason,
        progress: final.success ? final.data : progress,
      };
      return { ...end, report: jobReport(end) };
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

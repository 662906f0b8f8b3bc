/**
 * The queue runtime: BullMQ queues `imports` and `exports`, their workers,
 * job schedulers from jobs/, and the watched folders. See docs/runtime.md.
 */

export {
  BudgetPausedError,
  type BudgetUse,
  type FleetCounters,
  fleetCounterKeys,
  importLockKey,
  readFleetCounters,
} from "../runtime/index.ts";
export { exportLockKeys } from "../runtime/run-export-job.ts";
export { type Enqueued, enqueueExport, enqueueImport, followJob, type JobEnd } from "./enqueue.ts";
export { type FolderWatcher, type WatchedFolder, watchFolders } from "./folder-watcher.ts";
export {
  ExportJobData,
  type ExportJobDataInput,
  ImportJobData,
  type ImportJobDataInput,
  JobOrigin,
  parseJobData,
  WatchedFile,
} from "./job-data.ts";
export { exportJobId, importJobId } from "./job-ids.ts";
export { JobProgress } from "./job-progress.ts";
export { jobReport } from "./job-report.ts";
export { plainState } from "./plain-state.ts";
export {
  type AnyProgress,
  type BudgetWindow,
  importPercent,
  type ProgressInput,
  ProgressModel,
  type Projection,
  phaseInWords,
  progressModel,
  projectFinish,
} from "./progress-model.ts";
export {
  defaultJobOptions,
  openQueues,
  priorityOf,
  QUEUE_NAMES,
  type Queues,
  queueConnection,
  workerOptions,
} from "./queues.ts";
export { type ReconcileResult, reconcileSchedulers, SCHEDULER_PREFIX } from "./schedulers.ts";
export { type RunningWorker, type StartWorkerOptions, startWorker } from "./start-worker.ts";
export { fileAway, processingPath, WATCH_SUBFOLDERS } from "./watched-files.ts";

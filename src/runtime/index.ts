/**
 * The wiring every way in shares: Redis, the one service client behind the
 * shared rate governor, run locks, and job definitions resolved from the jobs
 * folder. The runners that own a whole run (run-import-job.ts,
 * run-export-job.ts) load the pipelines and are imported on their own, so a
 * command loads only the pipeline it runs.
 */

export { BudgetPausedError } from "./budget-paused-error.ts";
export {
  type ExportDefinitionRequest,
  parseResources,
  resolveExportDefinition,
} from "./export-definition.ts";
export {
  type FleetCounters,
  type FleetCounting,
  fleetCounterKeys,
  fleetCounting,
  readFleetCounters,
} from "./fleet-counters.ts";
export {
  type ImportDefinitionRequest,
  JobNotFoundError,
  type ResolvedImportDefinition,
  resolveImportDefinition,
} from "./import-definition.ts";
export {
  asRedis,
  type ClusterTarget,
  type ConnectRedisOptions,
  clusterOptions,
  connectRedis,
  createRedisConnection,
  GIVE_UP_AFTER_MS,
  isClusterUrl,
  parseClusterUrl,
  REDIS_GAVE_UP,
  type RedisConnection,
  redisOptions,
  safeRedisUrl,
} from "./redis-connection.ts";
export {
  importLockKey,
  type RunLock,
  RunLockedError,
  type RunLockKey,
  type RunLockOptions,
  takeRunLock,
  withRunLocks,
} from "./run-lock.ts";
export { checkServiceBaseUrl, SERVICE_PATH_PREFIX, serviceAddressCheck } from "./service-address.ts";
export {
  type BudgetUse,
  createServiceClient,
  readBudget,
  type ServiceClient,
  type ServiceClientOptions,
} from "./service-client.ts";
export { type SpooledInput, spoolInput } from "./spool-input.ts";

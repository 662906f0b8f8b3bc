/**
 * The wiring that both the queue workers and the CLI need: Redis, the service
 * client behind the shared rate governor, and job definitions resolved from
 * the jobs folder. Nothing here runs a job; the pipelines do.
 */
export {
  type ExportDefinitionRequest,
  parseResources,
  resolveExportDefinition,
} from "./export-definition.ts";
export {
  type ImportDefinitionRequest,
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
  isClusterUrl,
  parseClusterUrl,
  type RedisConnection,
  redisOptions,
  safeRedisUrl,
} from "./redis-connection.ts";
export {
  importLockKey,
  type RunLock,
  RunLockedError,
  type RunLockOptions,
  takeRunLock,
  withRunLock,
} from "./run-lock.ts";
export { checkServiceBaseUrl, SERVICE_PATH_PREFIX, serviceAddressCheck } from "./service-address.ts";
export { createServiceClient, type ServiceClient, type ServiceClientOptions } from "./service-client.ts";
export { type SpooledInput, spoolInput } from "./spool-input.ts";

/**
 * The ops HTTP server: the bull-board dashboard, the ops API, health and
 * metrics, on the queues of src/queue. See docs/ops.md.
 */
export { OPEN_PATHS } from "./basic-auth.ts";
export { DASHBOARD_PATH } from "./dashboard.ts";
export { jobDataJsonSchemas } from "./job-data-schemas.ts";
export { QUEUE_STATES } from "./metrics.ts";
export { OpsHttpError, type OpsProblem } from "./ops-http-error.ts";
export { type OpsServer, type OpsServerOptions, opsCredentials, startOpsServer } from "./ops-server.ts";
export { TriggerOverrides } from "./trigger-job.ts";

export { ConfigError } from "./config-error.ts";
export { RecruitSyncError, type RecruitSyncErrorOptions, runFailure } from "./recruit-sync-error.ts";
export { ServiceAddressError } from "./service-address-error.ts";
export { SinkError } from "./sink-error.ts";
export { UsageError } from "./usage-error.ts";

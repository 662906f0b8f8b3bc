export {
  ALERT_SEVERITIES,
  type AlertChannelConfig,
  type AlertRuleName,
  type AlertRulesConfig,
  type AlertSeverity,
  AlertsConfig,
} from "./alerts-config.ts";
export {
  type JobDefinition,
  type JobFile,
  readJobFile,
  readJobFiles,
} from "./job-files.ts";
export { type LoadConfigOptions, loadConfig } from "./load-config.ts";
export { hasHashTag, RESET_UNIT_VALUES, RuntimeConfig } from "./runtime-config.ts";
export { describeYamlError } from "./yaml-error.ts";

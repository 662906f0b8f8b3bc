/**
 * Alerts and run history: rules in the configuration evaluated by one process
 * of the fleet at a time, alert states in Redis, deliveries through the
 * `alerts` queue to signed webhooks, Slack-compatible webhooks and SMTP; the
 * run history the console and `recruit-sync runs` show. See docs/ops.md.
 */

export {
  type ReconciliationOutcome,
  readReconciliations,
  reportReconciliation,
} from "../synclog/reconciliation-outcomes.ts";
export { ALERT_RULES, AlertEvent, type AlertRule } from "./alert-event.ts";
export { alertKeys } from "./alert-keys.ts";
export { type AlertState, decide, type Observation, readAlertStates } from "./alert-state.ts";
export { alertHeadline, alertText, slackBody } from "./alert-text.ts";
export {
  ALERTS_QUEUE,
  type DeliveryJobData,
  deliveryJobId,
  flushOutbox,
  openAlertsQueue,
  startDeliveryWorker,
} from "./alerts-queue.ts";
export { channelTakes, type Delivered, sendAlert } from "./channels/send-alert.ts";
export { evaluateOnce, gatherInputs, watchEpoch } from "./evaluate.ts";
export { nextTick, observe, type RuleInputs } from "./rules.ts";
export {
  groupRuns,
  type JobAlertState,
  type JobHistory,
  type JobRuns,
  type ReadRunsOptions,
  type RunHistory,
  type RunSummary,
  readRunHistory,
  readRuns,
  runHistory,
  runJobName,
  summarizeRun,
} from "./run-history.ts";
export {
  DEFAULT_TOLERANCE_S,
  SIGNATURE_HEADER,
  signatureHeader,
  signPayload,
  verifySignature,
} from "./signature.ts";
export { type RunningAlerts, type StartAlertsOptions, startAlerts } from "./start-alerts.ts";
export { sampleAlert, testChannels } from "./test-alert.ts";

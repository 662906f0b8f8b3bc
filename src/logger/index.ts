export { createLogger, type LoggerOptions, maskEmail, REDACT_PATHS } from "./create-logger.ts";
export { humanDestination, humanLine } from "./human-lines.ts";
export { setTerminalGuard, writeAboveProgress } from "./terminal-guard.ts";

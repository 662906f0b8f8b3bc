export { createLogger, type LoggerOptions, maskEmail, REDACT_PATHS } from "./create-logger.ts";

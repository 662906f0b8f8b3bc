import pino, { type Logger } from "pino";

/**
 * Paths pino blanks out wherever they appear in a log record. Tokens and
 * people's contact details must never reach a log, even by accident.
 */
export const REDACT_PATHS = [
  "token",
  "*.token",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "email",
  "*.email",
  "phone",
  "*.phone",
  "recipientEmail",
  "*.recipientEmail",
  "additionalEmails",
  "*.additionalEmails",
  "additionalPhones",
  "*.additionalPhones",
  "people",
  "*.people",
];

export interface LoggerOptions {
  level?: string;
  name?: string;
  destination?: pino.DestinationStream;
}

/** The one logger factory: JSON lines, redaction on. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      name: options.name ?? "recruit-sync",
      level: options.level ?? process.env.LOG_LEVEL ?? "info",
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    },
    options.destination ?? pino.destination(2),
  );
}

/** a***@example.com — enough to tell people apart in a report, not to reach them. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  if (at <= 0) return "***";
  return `${email[0]}***${email.slice(at)}`;
}

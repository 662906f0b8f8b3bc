import pino, { type Logger } from "pino";
import { humanDestination } from "./human-lines.ts";

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
  /**
   * json: pino JSON lines always (the worker, whose logs go to a collector).
   * auto (default): human lines when the logs go to a terminal, JSON to a file or a pipe.
   */
  format?: "json" | "auto";
}

/** The one logger factory: redaction on; JSON lines, or human lines on a terminal. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const human = !options.destination && options.format !== "json" && process.stderr.isTTY === true;
  return pino(
    {
      name: options.name ?? "recruit-sync",
      level: options.level ?? process.env.LOG_LEVEL ?? "info",
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    },
    options.destination ?? (human ? humanDestination() : pino.destination(2)),
  );
}

/** a***@example.com — enough to tell people apart in a report, not to reach them. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  if (at <= 0) return "***";
  return `${email[0]}***${email.slice(at)}`;
}

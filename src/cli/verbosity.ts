import type { Logger } from "pino";
import { createLogger } from "../logger/index.ts";

/** Set from the global --verbose flag before any command runs. */
let verbose = false;

export function setVerbose(on: boolean): void {
  verbose = on;
}

/** --verbose, or DEBUG in the environment (kept from before the flag existed). */
export function isVerbose(): boolean {
  return verbose || Boolean(process.env.DEBUG);
}

/**
 * The logger of a command a person runs and waits for (import, export):
 * silent unless --verbose (debug) or LOG_LEVEL asks, because stderr carries
 * its one error line and stdout its progress; retries and waits show there.
 * Human lines on a terminal, JSON to a file or a pipe.
 */
export function commandLogger(name: string): Logger {
  const level = verbose ? "debug" : process.env.LOG_LEVEL || "silent";
  return createLogger({ level, name });
}

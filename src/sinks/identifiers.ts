import { SinkError } from "../errors/index.ts";

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Table and column names cannot be SQL parameters, so they are checked against
 * a closed pattern before they reach any statement, then quoted.
 */
export function quoteIdent(name: string): string {
  if (!IDENTIFIER.test(name)) {
    throw new SinkError(`"${name}" is not a usable table or column name (expected [a-z_][a-z0-9_]*)`, {
      retryable: false,
    });
  }
  return `"${name}"`;
}

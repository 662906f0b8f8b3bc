import { UsageError } from "../../errors/index.ts";

/** A port flag's value, refused in one line when it is not a port; undefined when not given. */
export function parsePort(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(`${flag} ${value}: give a port number from 0 to 65535`);
  }
  return port;
}

import { ConfigError } from "../errors/index.ts";

export type WarehouseTarget =
  | { kind: "duckdb"; path: string }
  | { kind: "postgres"; url: string }
  | { kind: "file"; dir: string };

export const DEFAULT_WAREHOUSE_URL = "duckdb:./data/warehouse.duckdb";

/**
 * Reads a warehouse URL: `duckdb:PATH`, `postgres://…` (or `postgresql://…`),
 * `file:DIR`. Anything else is a configuration error.
 */
export function parseWarehouseUrl(url: string): WarehouseTarget {
  const trimmed = url.trim();
  if (trimmed.startsWith("duckdb:")) {
    const path = trimmed.slice("duckdb:".length).replace(/^\/\/(?=\/)/, "");
    if (path) return { kind: "duckdb", path };
  } else if (/^postgres(ql)?:\/\//.test(trimmed)) {
    return { kind: "postgres", url: trimmed };
  } else if (trimmed.startsWith("file:")) {
    const dir = trimmed.slice("file:".length).replace(/^\/\/(?=\/)/, "");
    if (dir) return { kind: "file", dir };
  }
  throw new ConfigError(
    `warehouse URL "${trimmed.replace(/\/\/[^@/]*@/, "//***@")}" is not one of duckdb:PATH, postgres://…, file:DIR`,
    [{ path: "warehouse", message: "expected duckdb:PATH, postgres://… or file:DIR" }],
  );
}

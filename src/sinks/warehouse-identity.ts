import path from "node:path";
import { parseWarehouseUrl } from "./warehouse-url.ts";

/** What two runs must agree on to be writing to the same place. */
export interface WarehouseIdentity {
  /** The same for every spelling of one warehouse: an absolute path, or a database URL without its password. */
  key: string;
  /**
   * True when the warehouse admits one writer process at a time (a DuckDB
   * file), so a run holds all of it rather than only its resources.
   */
  singleWriter: boolean;
}

/**
 * Which warehouse a URL names, for run locks: `duckdb:./w.duckdb` from two
 * folders are two files; `postgres://u:secret@h/db` and `postgres://u@h/db`
 * are one database.
 */
export function warehouseIdentity(url: string): WarehouseIdentity {
  const target = parseWarehouseUrl(url);
  switch (target.kind) {
    case "duckdb":
      return { key: `duckdb:${path.resolve(target.path)}`, singleWriter: true };
    case "file":
      return { key: `file:${path.resolve(target.dir)}`, singleWriter: false };
    case "postgres": {
      const u = new URL(target.url);
      u.password = "";
      u.protocol = "postgres:";
      return { key: `postgres:${u.toString()}`, singleWriter: false };
    }
  }
}

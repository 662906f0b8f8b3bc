import { DuckDbSink } from "./duckdb/duckdb-sink.ts";
import { FileSink } from "./file/file-sink.ts";
import { PostgresSink } from "./postgres/postgres-sink.ts";
import type { Sink } from "./types.ts";
import { parseWarehouseUrl } from "./warehouse-url.ts";

/**
 * Opens the warehouse a URL names.
 *
 * @example
 * const sink = await createSink("duckdb:./data/warehouse.duckdb");
 * await sink.prepare(tables);
 */
export async function createSink(url: string): Promise<Sink> {
  const target = parseWarehouseUrl(url);
  switch (target.kind) {
    case "duckdb":
      return DuckDbSink.open(target.path);
    case "postgres":
      return new PostgresSink(target.url);
    case "file":
      return new FileSink(target.dir, target.options);
  }
}

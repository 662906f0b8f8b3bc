import type { Sink } from "./types.ts";
import { parseWarehouseUrl } from "./warehouse-url.ts";

/**
 * Opens the warehouse a URL names. Each kind's module is loaded when a URL
 * names it, not before: a DuckDB warehouse never loads the PostgreSQL
 * client, nor a PostgreSQL one DuckDB (~40 ms of CPU a start, where the
 * import's sync log opens the warehouse beside the run).
 *
 * @example
 * const sink = await createSink("duckdb:./data/warehouse.duckdb");
 * await sink.prepare(tables);
 */
export async function createSink(url: string): Promise<Sink> {
  const target = parseWarehouseUrl(url);
  switch (target.kind) {
    case "duckdb": {
      const { DuckDbSink } = await import("./duckdb/duckdb-sink.ts");
      return DuckDbSink.open(target.path);
    }
    case "postgres": {
      const { PostgresSink } = await import("./postgres/postgres-sink.ts");
      return new PostgresSink(target.url);
    }
    case "file": {
      const { FileSink } = await import("./file/file-sink.ts");
      return new FileSink(target.dir, target.options);
    }
  }
}

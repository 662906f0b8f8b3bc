import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { ExportJobDefinition } from "../../config/export-job.ts";
import { emailStreamKey, exportTableSchemas } from "../../exports/index.ts";
import { createSink, parseWarehouseUrl } from "../../sinks/index.ts";

/** The file (DuckDB) or folder (files) of a warehouse; undefined for PostgreSQL and in-memory DuckDB. */
export function warehousePath(url: string): string | undefined {
  const target = parseWarehouseUrl(url);
  if (target.kind === "duckdb") return target.path === ":memory:" ? undefined : target.path;
  return target.kind === "file" ? target.dir : undefined;
}

/** DuckDB creates its file but not the folder it sits in. */
export async function ensureWarehouseFolder(url: string): Promise<void> {
  const p = warehousePath(url);
  if (p && parseWarehouseUrl(url).kind === "duckdb")
    await mkdir(path.dirname(p), { recursive: true, mode: 0o700 });
}

/**
 * Every demo run talks to a new emulator, so an email cursor left in the
 * warehouse by an earlier run points into a service that is gone: a second
 * run would load only the last hours' messages (136 rows where the first
 * loaded 215). The demo removes that one cursor before its export; the rows
 * stay and are upserted again.
 */
export async function forgetEmailCursor(url: string, definition: ExportJobDefinition): Promise<boolean> {
  const p = warehousePath(url);
  if (p && !existsSync(p)) return false;
  const sink = await createSink(url);
  try {
    const stream = emailStreamKey({ definition });
    if ((await sink.readState(stream)) === undefined) return false;
    await sink.commit({ runId: `demo-${randomUUID()}`, state: { stream, value: null } });
    return true;
  } finally {
    await sink.close();
  }
}

/** Live rows (not soft-deleted) per exported table, as the warehouse holds them now. */
export async function liveRowsPerTable(url: string): Promise<Record<string, number>> {
  const sink = await createSink(url);
  try {
    // The export has made these tables already; prepare() only tells the sink their shape.
    await sink.prepare(exportTableSchemas());
    const counts: Record<string, number> = {};
    for (const table of exportTableSchemas()) {
      const rows = await sink.readTable(table.name);
      counts[table.name] = rows.filter((r) => r._deleted_at === null || r._deleted_at === undefined).length;
    }
    return counts;
  } finally {
    await sink.close();
  }
}

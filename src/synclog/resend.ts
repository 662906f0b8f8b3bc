import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SourceOptions } from "../config/import-job.ts";
import { hashFile } from "../imports/file-hash.ts";
import { openCsv } from "../imports/read-records.ts";
import type { Sink } from "../sinks/index.ts";
import { SYNC_LOG_TABLE } from "./table.ts";

/** The rows of one earlier run whose people a read-back check found missing. */
export interface MissingRows {
  runId: string;
  job: string | null;
  /** The file the run read, as it recorded it. */
  file: string | null;
  studyId: string;
  /** Row numbers as the run counted them (its rejects file counts the same way). */
  rows: number[];
  digests: string[];
}

/** sync_log rows marked `missing`, grouped by the run that sent them, with that run's file. */
export async function missingByRun(sink: Sink, studyId?: string): Promise<MissingRows[]> {
  await sink.prepare([SYNC_LOG_TABLE]);
  const runs = new Map((await sink.readRuns()).map((r) => [r.runId, r]));
  const byRun = new Map<string, MissingRows>();
  for (const row of await sink.readTable(SYNC_LOG_TABLE.name)) {
    if (row.verification !== "missing") continue;
    if (studyId !== undefined && row.study_id !== studyId) continue;
    const runId = String(row.run_id);
    let group = byRun.get(runId);
    if (!group) {
      const run = runs.get(runId);
      group = {
        runId,
        job: run?.job ?? null,
        file: run?.file ?? null,
        studyId: String(row.study_id),
        rows: [],
        digests: [],
      };
      byRun.set(runId, group);
    }
    group.rows.push(...(row.source_rows as number[]));
    group.digests.push(String(row.person_digest));
  }
  for (const g of byRun.values()) g.rows.sort((a, b) => a - b);
  return [...byRun.values()];
}

function csvCell(cell: string, delimiter: string): string {
  return /["\r\n]/.test(cell) || cell.includes(delimiter) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/**
 * Writes the header and the given rows of `file` to `out` (UTF-8, the
 * file's delimiter) when the file is still the one the run read (same
 * SHA-256); returns false when it is gone or changed.
 */
export async function extractRows(
  file: string,
  fileHash: string | null,
  rows: readonly number[],
  out: string,
  source: SourceOptions,
): Promise<boolean> {
  const hash = await hashFile(file).catch(() => undefined);
  if (hash === undefined || (fileHash !== null && hash !== fileHash)) return false;
  const wanted = new Set(rows);
  const csv = await openCsv(file, source);
  const delimiter = csv.delimiter;
  const lines: string[] = [];
  let header = source.header;
  for await (const chunk of csv.records(undefined, { worker: false })) {
    for (let i = 0; i < chunk.length; i++) {
      if (header || wanted.has(chunk.firstRow + i)) {
        lines.push(
          chunk
            .cells(i)
            .map((c) => csvCell(c, delimiter))
            .join(delimiter),
        );
        header = false;
      }
    }
  }
  await mkdir(path.dirname(out), { recursive: true, mode: 0o700 });
  await writeFile(out, `${lines.join("\n")}\n`, { mode: 0o600 });
  return true;
}

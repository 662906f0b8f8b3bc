import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { z } from "zod";
import { MANIFEST_FILE } from "../sinks/file/file-sink.ts";

const ListedPart = z.object({ part: z.object({ table: z.string(), ndjson: z.string(), csv: z.string() }) });

/**
 * The retention purge of a file warehouse (`file:DIR`): every sync_log part
 * its manifest lists loses its rows logged before `before`, in both its
 * NDJSON and its CSV file; a part left empty is deleted. The manifest is
 * left as it is (it is the commit log, and other runs append to it): a part
 * it lists and that is gone reads as empty, as a killed run's would.
 * Returns the rows removed.
 */
export async function purgeFileSyncLog(dir: string, before: Date): Promise<number> {
  let manifest: string;
  try {
    manifest = await readFile(join(dir, MANIFEST_FILE), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw err;
  }
  let removed = 0;
  for (const line of manifest.split("\n")) {
    if (!line) continue;
    let listed: z.infer<typeof ListedPart>;
    try {
      listed = ListedPart.parse(JSON.parse(line));
    } catch {
      continue;
    }
    if (listed.part.table !== "sync_log") continue;
    removed += await purgePart(join(dir, listed.part.ndjson), join(dir, listed.part.csv), before);
  }
  return removed;
}

/** One part's two files without the rows logged before `before`; the rows removed. */
async function purgePart(ndjsonFile: string, csvFile: string, before: Date): Promise<number> {
  let ndjson: string;
  try {
    ndjson = await readFile(ndjsonFile, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw err;
  }
  const lines = ndjson.split("\n").filter((l) => l !== "");
  const keep = lines.map((l) => {
    const at = (JSON.parse(l) as { logged_at?: string | null }).logged_at;
    return !at || new Date(at).getTime() >= before.getTime();
  });
  const kept = keep.filter(Boolean).length;
  if (kept === lines.length) return 0;
  if (kept === 0) {
    await rm(ndjsonFile, { force: true });
    await rm(csvFile, { force: true });
    return lines.length;
  }
  await replace(ndjsonFile, `${lines.filter((_, i) => keep[i]).join("\n")}\n`);
  // The CSV part has the header, then the NDJSON's rows in its order: kept by the byte span of each record.
  const csv = await readFile(csvFile).catch(() => undefined);
  if (csv) {
    const records = parse(csv, { info: true, bom: false, relax_column_count: true }) as unknown as {
      info: { bytes: number };
    }[];
    const spans: Buffer[] = [];
    let start = 0;
    records.forEach((r, i) => {
      if (i === 0 || keep[i - 1]) spans.push(csv.subarray(start, r.info.bytes));
      start = r.info.bytes;
    });
    await replace(csvFile, Buffer.concat(spans));
  }
  return lines.length - kept;
}

/** Replaces a file whole (a temporary file renamed over it), readable by its owner only. */
async function replace(file: string, content: string | Buffer): Promise<void> {
  const tmp = `${file}.purge-${process.pid}`;
  await writeFile(tmp, content, { mode: 0o600 });
  await rename(tmp, file);
}

import { constants, existsSync } from "node:fs";
import { copyFile, mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { WatchedFile } from "./job-data.ts";

/** Folders inside a watched folder: the watcher never takes files from these. */
export const WATCH_SUBFOLDERS = {
  processing: "processing",
  processed: "processed",
  failed: "failed",
} as const;

/** Where a taken file waits while its import is queued and running. */
export function processingPath(watched: WatchedFile): string {
  return path.join(watched.folder, WATCH_SUBFOLDERS.processing, watched.name);
}

/** A name free in `dir`: `name`, else `name` with a time stamp before the extension. */
function freeName(dir: string, name: string, taken: (p: string) => boolean): string {
  if (!taken(path.join(dir, name))) return name;
  const ext = path.extname(name);
  const stamp = new Date().toISOString().replace(/[-:.]/g, "");
  return `${path.basename(name, ext)}.${stamp}${ext}`;
}

/** The data folder may be another file system than the watched folder: copy, then remove. */
async function moveBeside(file: string | null | undefined, to: string): Promise<string | undefined> {
  if (!file || !existsSync(file)) return undefined;
  await copyFile(file, to, constants.COPYFILE_EXCL).catch(() => copyFile(file, to));
  await rm(file, { force: true });
  return to;
}

export interface FilingResult {
  file: string;
  report: string;
  rejects: string | undefined;
}

/**
 * Moves a watched folder's file to processed/ or failed/, beside its report
 * (JSON) and its rejects: what ops look at when an import went wrong. The
 * report and rejects hold people's data: owner-only.
 */
export async function fileAway(
  watched: WatchedFile,
  outcome: "processed" | "failed",
  details: {
    report: unknown;
    rejectsFile?: string | null | undefined;
    warningsFile?: string | null | undefined;
    from?: string;
  },
): Promise<FilingResult> {
  const dir = path.join(watched.folder, WATCH_SUBFOLDERS[outcome]);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const name = freeName(dir, watched.name, existsSync);
  const target = path.join(dir, name);
  const from = details.from ?? processingPath(watched);
  // Report and rejects first: whoever sees the file in processed/ or failed/ finds its report beside it.
  const report = `${target}.report.json`;
  await writeFile(report, `${JSON.stringify(details.report, null, 2)}\n`, { mode: 0o600 });
  const rejects = await moveBeside(details.rejectsFile, `${target}.rejects.csv`);
  await moveBeside(details.warningsFile, `${target}.warnings.csv`);
  if (existsSync(from)) await rename(from, target);
  return { file: target, report, rejects };
}

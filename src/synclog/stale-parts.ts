import { readdir, rm, stat } from "node:fs/promises";
import path from "node:path";

/** A part of a run's log as PersonLog names it beside the run's other files: `<job>-<run>.sync-log.<n>.csv`. */
const LOG_PART = /\.sync-log\.\d+\.csv$/;

/**
 * Removes the log parts in `dir` (the data folder's `imports/`) last written
 * before `before`: parts of a run killed and never run again, which no load
 * will take (a rerun under the same id writes its people afresh). They hold
 * emails or phones, so they go with the log's retention. A run still going
 * writes its part as its answers come, so its part is never that old.
 * Returns how many were removed; a folder not there yet removes none.
 */
export async function removeStaleLogParts(dir: string, before: Date): Promise<number> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [];
    throw err;
  });
  let removed = 0;
  for (const name of names.filter((n) => LOG_PART.test(n))) {
    const file = path.join(dir, name);
    const modified = await stat(file).then(
      (s) => s.mtime,
      () => undefined,
    );
    if (modified === undefined || modified >= before) continue;
    await rm(file, { force: true });
    removed++;
  }
  return removed;
}

import { existsSync } from "node:fs";
import { lstat, mkdir, readdir, realpath, rename } from "node:fs/promises";
import path from "node:path";
import { watch as chokidarWatch, type FSWatcher } from "chokidar";
import type { Logger } from "pino";
import type { RuntimeConfig } from "../config/index.ts";
import { RecruitSyncError } from "../errors/index.ts";
import { type Enqueued, enqueueImport } from "./enqueue.ts";
import type { WatchedFile } from "./job-data.ts";
import type { Queues } from "./queues.ts";
import { fileAway, processingPath, WATCH_SUBFOLDERS } from "./watched-files.ts";

export interface WatchedFolder {
  folder: string;
  job: string;
  stableMs: number;
}

export interface FolderWatcher {
  /** Resolves once the files already in the folders have been seen. */
  ready: Promise<void>;
  /** Enqueues again the files in each folder's processing/ (after Redis lost their jobs). */
  rescan(): Promise<void>;
  close(): Promise<void>;
}

/** Names editors and copy tools use while a file is still being written. */
function looksTemporary(name: string): boolean {
  return (
    name.startsWith(".") || name.startsWith("~") || /\.(tmp|part|partial|crdownload|swp)$|~$/i.test(name)
  );
}

/**
 * Watches each configured folder and enqueues an import of every file that
 * lands in it, once its size has stopped changing. The file is moved to
 * processing/ first (a rename: of several workers watching one folder, one
 * takes it), enqueued through `enqueueImport` as any import is, with its
 * content hash in the job id (the same bytes under another name are imported
 * once); a file whose job is refused is filed in failed/ with the refusal,
 * and the rest in processed/ or failed/
 * by the worker that runs the import. Only regular files directly inside the
 * folder are taken: never a symlink, never a path built from a name.
 */
export function watchFolders(
  config: RuntimeConfig,
  queues: Pick<Queues, "imports">,
  folders: readonly WatchedFolder[],
  logger: Logger,
): FolderWatcher {
  const watchers: FSWatcher[] = [];
  const readies: Promise<void>[] = [];
  const inFlight = new Set<Promise<void>>();
  let closed = false;

  const track = (p: Promise<void>) => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  async function enqueue(w: WatchedFolder, watched: WatchedFile): Promise<void> {
    const log = logger.child({ folder: w.folder, job: w.job });
    const file = processingPath(watched);
    let enqueued: Enqueued;
    try {
      enqueued = await enqueueImport(config, queues, { job: w.job, file, origin: "watch", watched });
    } catch (err) {
      // A Redis that does not answer is not the file's fault: left in processing/, taken again on rescan.
      if (!(err instanceof RecruitSyncError) || err.retryable) throw err;
      await fileAway(watched, "failed", { report: { failure: { code: err.code, message: err.message } } });
      log.error({ code: err.code }, "watched file's import was refused: file filed in failed/");
      return;
    }
    const { jobId, state } = enqueued;
    if (!enqueued.duplicate) {
      log.info({ jobId }, "watched file enqueued");
      return;
    }
    // This very file's job (a worker restarted after a crash finds its file in processing/): the job
    // files it when it ends. Taken for a duplicate, the file would leave processing/ before the job
    // ran, and the job, picked up again after its worker died, would find nothing to read.
    if (enqueued.sameFile && state !== "completed") {
      log.info({ jobId, state }, "watched file already has its job: left in processing/ for it");
      return;
    }
    await fileAway(watched, "processed", {
      report: {
        duplicateOf: jobId,
        state,
        message: `the same bytes were already taken as job ${jobId} (${state}): not imported again`,
      },
    });
    log.info({ jobId, state }, "watched file is a duplicate of a job already taken: filed in processed/");
  }

  async function take(w: WatchedFolder, full: string): Promise<void> {
    if (closed) return;
    const name = path.basename(full);
    if (path.dirname(full) !== w.folder || looksTemporary(name)) return;
    const stats = await lstat(full).catch(() => undefined);
    if (!stats) return;
    const watched: WatchedFile = { folder: w.folder, name };
    if (!stats.isFile()) {
      if (stats.isSymbolicLink()) {
        await fileAway(watched, "failed", {
          from: full,
          report: {
            failure: {
              code: "file_symlink",
              message: "a symbolic link: links are never followed; drop the file itself",
            },
          },
        });
        logger.warn({ folder: w.folder }, "watched folder: a symbolic link was filed in failed/");
      }
      return;
    }
    await mkdir(path.join(w.folder, WATCH_SUBFOLDERS.processing), { recursive: true, mode: 0o700 });
    let target = processingPath(watched);
    if (existsSync(target)) {
      // A file of the same name is still being imported: this one waits under another name.
      const ext = path.extname(name);
      watched.name = `${path.basename(name, ext)}.${Date.now()}${ext}`;
      target = processingPath(watched);
    }
    try {
      await rename(full, target);
    } catch (err) {
      // Another worker took it first, or it was removed: nothing to do.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    await enqueue(w, watched);
  }

  /** Files a crash left in processing/: enqueued again (the job id makes that idempotent). */
  async function resume(w: WatchedFolder): Promise<void> {
    const dir = path.join(w.folder, WATCH_SUBFOLDERS.processing);
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      const stats = await lstat(path.join(dir, name)).catch(() => undefined);
      if (stats?.isFile()) await enqueue(w, { folder: w.folder, name });
    }
  }

  const resolved: WatchedFolder[] = [];
  for (const configured of folders) {
    const w = { ...configured, folder: path.resolve(configured.folder) };
    resolved.push(w);
    const ready = (async () => {
      await mkdir(w.folder, { recursive: true, mode: 0o700 });
      w.folder = await realpath(w.folder);
      await resume(w);
      const watcher = chokidarWatch(w.folder, {
        depth: 0,
        ignoreInitial: false,
        followSymlinks: false,
        awaitWriteFinish: { stabilityThreshold: w.stableMs, pollInterval: Math.min(100, w.stableMs || 100) },
        ignored: (p: string) =>
          p !== w.folder &&
          path.dirname(p) === w.folder &&
          Object.values(WATCH_SUBFOLDERS).includes(path.basename(p) as never),
      });
      watchers.push(watcher);
      watcher.on("add", (full: string) => {
        track(
          take(w, full).catch((err: unknown) => {
            logger.error(
              { folder: w.folder, err: err instanceof Error ? err.message : String(err) },
              "watched file could not be taken",
            );
          }),
        );
      });
      watcher.on("error", (err: unknown) => {
        logger.error(
          { folder: w.folder, err: err instanceof Error ? err.message : String(err) },
          "watching a folder failed",
        );
      });
      await new Promise<void>((resolve) => watcher.once("ready", () => resolve()));
      logger.info({ folder: w.folder, job: w.job }, "watching folder");
    })();
    readies.push(ready);
  }

  return {
    ready: Promise.all(readies).then(() => {}),
    async rescan() {
      for (const w of resolved) if (!closed) await resume(w);
    },
    async close() {
      closed = true;
      await Promise.all(watchers.map((w) => w.close()));
      await Promise.allSettled([...inFlight]);
    },
  };
}

import { createHash, randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { z } from "zod";

/**
 * Where one run's spill and other scratch files go: a private folder under
 * `root` (`<dataDir>/spill` for the CLI and the workers), named after the
 * import's run lock so that the rerun of a killed import finds — and removes —
 * what the killed run left. Every validated person's email, phone and name is
 * in there, so a leftover must not wait for a reboot of /tmp.
 */
export interface SpillFolderOptions {
  root: string;
  /**
   * The Redis key of the run lock the caller holds for this import. Without
   * it (a dry run, a library caller without Redis) the folder is the run's own.
   */
  lockKey?: string;
  /** To ask whether the run lock recorded in another folder is still held. */
  redis?: { exists(key: string): Promise<number> };
}

/** Written first into every spill folder: who may still be using it. */
const Owner = z.object({
  lockKey: z.string().nullable(),
  host: z.string(),
  pid: z.number().int().positive(),
  startedAt: z.string(),
});
type Owner = z.infer<typeof Owner>;

const OWNER_FILE = "owner.json";
/** Only folders named like ours are ever considered: `root` may hold other things (tests pass their own folder). */
const FOLDER_NAME = /^(import-[0-9a-f]{32}|run-[0-9a-f-]{36})$/;
/**
 * A folder without a readable owner file was made by a run killed between
 * mkdir and the owner's write, microseconds apart: past this age no live run
 * can be about to write it.
 */
const OWNERLESS_GRACE_MS = 10 * 60_000;

/** The folder name of an import with run lock `lockKey`: a digest, since a Redis key may hold any character. */
export function spillFolderName(lockKey: string): string {
  return `import-${createHash("sha256").update(lockKey).digest("hex").slice(0, 32)}`;
}

/**
 * Creates the run's spill folder (0700) with its owner file (0600) and
 * returns its path. First removes what a killed run of the same import left
 * (the caller holds that import's lock, so no live run uses it), then the
 * folders of other runs that are provably over (see `isStale`).
 */
export async function openSpillFolder(options: SpillFolderOptions): Promise<string> {
  await mkdir(options.root, { recursive: true, mode: 0o700 });
  const name = options.lockKey ? spillFolderName(options.lockKey) : `run-${randomUUID()}`;
  await removeStaleSpills(options, name);
  const folder = path.join(options.root, name);
  if (options.lockKey) await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { mode: 0o700 });
  const owner: Owner = {
    lockKey: options.lockKey ?? null,
    host: hostname(),
    pid: process.pid,
    startedAt: new Date().toISOString(),
  };
  await writeFile(path.join(folder, OWNER_FILE), `${JSON.stringify(owner)}\n`, { mode: 0o600, flag: "wx" });
  return folder;
}

/** Removes the spill folders under `root` whose runs are over; one that cannot be judged or removed stays. */
export async function removeStaleSpills(options: SpillFolderOptions, keep?: string): Promise<string[]> {
  const removed: string[] = [];
  const entries = await readdir(options.root, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name === keep || !FOLDER_NAME.test(entry.name)) continue;
    const folder = path.join(options.root, entry.name);
    try {
      if (!(await isStale(folder, options.redis))) continue;
      await rm(folder, { recursive: true, force: true });
      removed.push(entry.name);
    } catch {
      // Another user's folder, or one removed meanwhile: not ours to fight over.
    }
  }
  return removed;
}

/**
 * Whether a folder's run is over. Made on this host: its process is dead (a
 * live run of the same import would have made the folder afresh, with its
 * own pid). Made on another host (a data folder shared by workers): its run
 * lock is no longer in Redis, whose lease a live holder keeps renewing; a
 * Redis error, or no Redis to ask, keeps it.
 */
async function isStale(folder: string, redis: SpillFolderOptions["redis"]): Promise<boolean> {
  const owner = await readOwner(folder);
  if (owner === undefined) {
    const made = await stat(folder);
    return Date.now() - made.mtimeMs > OWNERLESS_GRACE_MS;
  }
  if (owner.host === hostname()) return !processAlive(owner.pid);
  if (owner.lockKey === null || redis === undefined) return false;
  return redis.exists(owner.lockKey).then(
    (n) => n === 0,
    () => false,
  );
}

async function readOwner(folder: string): Promise<Owner | undefined> {
  try {
    const parsed = Owner.safeParse(JSON.parse(await readFile(path.join(folder, OWNER_FILE), "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, under another user.
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

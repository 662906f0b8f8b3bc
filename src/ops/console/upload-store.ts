import { randomUUID } from "node:crypto";
import { chmod, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import { z } from "zod";
import type { RuntimeConfig } from "../../config/index.ts";
import { OpsHttpError } from "../ops-http-error.ts";

/** An upload's id: a UUID, so that it names a folder and nothing else. */
export const UploadId = z.uuid({ message: "an upload id as POST /api/uploads answers it" });

/** What is kept beside an uploaded file: nothing of its content. */
export const UploadMeta = z.object({
  fileName: z.string().nullable(),
  bytes: z.number().int().min(0),
  uploadedAt: z.string(),
});
export type UploadMeta = z.infer<typeof UploadMeta>;

export interface Upload {
  id: string;
  /** The folder of this upload: owner-only, removed whole. */
  dir: string;
  /** The CSV as it was sent, 0600. */
  file: string;
}

const FILE = "upload.csv";
const META = "upload.json";

/** `<dataDir>/uploads`: people's rows, so a folder only its owner can enter. */
export function uploadsDir(config: RuntimeConfig): string {
  return path.resolve(config.paths.dataDir, "uploads");
}

function paths(config: RuntimeConfig, id: string): Upload {
  const dir = path.join(uploadsDir(config), id);
  return { id, dir, file: path.join(dir, FILE) };
}

/** A new, empty upload folder (0700 under a 0700 uploads folder); the file is written by the caller. */
export async function newUpload(config: RuntimeConfig): Promise<Upload> {
  const root = uploadsDir(config);
  await mkdir(root, { recursive: true, mode: 0o700 });
  // mode applies only to folders mkdir creates: an older one is made private here.
  await chmod(root, 0o700);
  const upload = paths(config, randomUUID());
  await mkdir(upload.dir, { mode: 0o700 });
  return upload;
}

export async function writeUploadMeta(upload: Upload, meta: UploadMeta): Promise<void> {
  await writeFile(path.join(upload.dir, META), `${JSON.stringify(meta)}\n`, { mode: 0o600, flag: "wx" });
}

/** The upload of this id, or a 404 that says uploads do not last. */
export async function findUpload(
  config: RuntimeConfig,
  id: string,
  keepDays: number,
): Promise<Upload & { meta: UploadMeta }> {
  const upload = paths(config, UploadId.parse(id));
  try {
    const meta = UploadMeta.parse(JSON.parse(await readFile(path.join(upload.dir, META), "utf8")));
    await stat(upload.file);
    return { ...upload, meta };
  } catch {
    throw new OpsHttpError(
      404,
      "ops_upload_unknown",
      `no upload ${id}: upload the file again (uploads are kept ${keepDays} days)`,
    );
  }
}

/**
 * Removes the uploads older than `keepDays` (by the time the file was
 * written), and folders left by an upload that never finished. Returns how
 * many were removed.
 */
export async function removeOldUploads(
  config: RuntimeConfig,
  keepDays: number,
  logger: Logger,
  now = Date.now(),
): Promise<number> {
  const root = uploadsDir(config);
  let entries: string[];
  try {
    entries = await readdir(root);
  } catch {
    return 0;
  }
  const cutoff = now - keepDays * 24 * 3600 * 1000;
  let removed = 0;
  for (const name of entries) {
    if (!UploadId.safeParse(name).success) continue;
    const upload = paths(config, name);
    const written = await stat(upload.file)
      .catch(() => stat(upload.dir))
      .catch(() => undefined);
    if (!written || written.mtimeMs >= cutoff) continue;
    await rm(upload.dir, { recursive: true, force: true });
    removed++;
  }
  if (removed) logger.info({ removed, keepDays }, "ops console: old uploads removed");
  return removed;
}

import { createHmac, timingSafeEqual } from "node:crypto";
import { realpath } from "node:fs/promises";
import path from "node:path";
import type { RuntimeConfig } from "../config/index.ts";
import { ImportFileError } from "../imports/index.ts";

/**
 * How the file of an import came to the tool. The person at a shell names any
 * file they can read (`recruit-sync import FILE --inline`); everything that
 * reaches a worker through the queue — the ops API, the console, a job added
 * on the dashboard or with `queue.add` — reads only under the import roots,
 * unless the CLI that enqueued it signed the file with the API token.
 */
export type FileGiven = { by: "shell" } | { by: "queue"; grant?: string | undefined };

/** An import root and what put it there, for the refusal's one line. */
interface ImportRoot {
  dir: string;
  what: "uploads" | "watched folder" | "imports.roots";
}

/**
 * The folders a queued import may read from: the console's uploads, the
 * watched folders, and `imports.roots`, absolute. The CLI's spool of standard
 * input is not one: only the CLI itself reads it, in the same process.
 */
export function importRoots(config: RuntimeConfig): ImportRoot[] {
  return [
    { dir: path.resolve(config.paths.dataDir, "uploads"), what: "uploads" as const },
    ...config.watch.map((w) => ({ dir: path.resolve(w.folder), what: "watched folder" as const })),
    ...config.imports.roots.map((r) => ({ dir: path.resolve(r), what: "imports.roots" as const })),
  ];
}

/** True when `file` is strictly inside `dir` (both absolute and normalised): `..` never is. */
function inside(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

function fileMac(token: string, realFile: string): string {
  return createHmac("sha256", token).update(`recruit-sync import file ${realFile}`).digest("hex");
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The grant the CLI puts beside a file it enqueues: the API token's signature
 * of the file's real path. A job typed by hand cannot make one; undefined
 * without a token (then the file must lie under an import root).
 */
export function grantImportFile(config: RuntimeConfig, realFile: string): string | undefined {
  return config.service.token ? fileMac(config.service.token, realFile) : undefined;
}

/** The one line every way in answers a file outside the roots with. */
function refusal(config: RuntimeConfig, file: string, viaLink: boolean): ImportFileError {
  const roots = importRoots(config)
    .map((r) => `${r.dir} (${r.what})`)
    .join(", ");
  const how = viaLink ? " leads outside them through a symbolic link" : " is outside them";
  return new ImportFileError(
    "file_not_allowed",
    `refused ${file}: a queued import reads only files under ${roots}, or one named to 'recruit-sync import' at a shell; this file${how}. Upload it in the console, drop it into a watched folder, or add its folder to imports.roots in the configuration`,
  );
}

/**
 * The file an import may open, resolved through every symbolic link, or the
 * one-line refusal (`file_not_allowed`, not retryable). The caller opens the
 * path returned, never the one given, so a link swapped after the check is
 * not followed. A file under no root is refused before it is opened, and
 * before anything says whether it exists.
 *
 * @example
 * const real = await allowedImportFile(config, data.file, { by: "queue", grant: data.fileGrant });
 */
export async function allowedImportFile(
  config: RuntimeConfig,
  file: string,
  given: FileGiven,
): Promise<string> {
  const asked = path.resolve(file);
  let real: string | undefined;
  let missing: NodeJS.ErrnoException | undefined;
  try {
    real = await realpath(asked);
  } catch (err) {
    missing = err as NodeJS.ErrnoException;
  }
  if (given.by === "shell") return real ?? asked;
  const roots = importRoots(config);
  if (real === undefined) {
    // Missing or unreadable: said as such only inside a root, so the refusal tells nothing of other paths.
    if (!roots.some((r) => inside(r.dir, asked))) throw refusal(config, asked, false);
    throw new ImportFileError(
      "file_unreadable",
      `cannot read ${asked} (${missing?.code ?? missing?.message}): whoever runs the import (a worker, on its own disk) must see that path`,
      { cause: missing },
    );
  }
  const token = config.service.token;
  if (token && given.grant && sameHex(given.grant, fileMac(token, real))) return real;
  for (const root of roots) {
    const realRoot = await realpath(root.dir).catch(() => undefined);
    if (realRoot !== undefined && inside(realRoot, real)) return real;
  }
  const viaLink = real !== asked && roots.some((r) => inside(r.dir, asked));
  throw refusal(config, asked, viaLink);
}

/** True when `folder` is one of the configured watched folders (compared through links). */
export async function isWatchedFolder(config: RuntimeConfig, folder: string): Promise<boolean> {
  const real = await realpath(path.resolve(folder)).catch(() => undefined);
  if (real === undefined) return false;
  for (const w of config.watch) {
    if ((await realpath(path.resolve(w.folder)).catch(() => undefined)) === real) return true;
  }
  return false;
}

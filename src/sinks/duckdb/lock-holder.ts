import { readFileSync } from "node:fs";
import type { FileLockHolder } from "../../errors/index.ts";

/**
 * DuckDB's words when another process has the file open: "IO Error: Could
 * not set lock on file "…": Conflicting lock is held in /usr/bin/node (PID
 * 123) by user ann. …" (the user part only on some platforms).
 */
const LOCK_CONFLICT = /Could not set lock on file/i;
const HOLDER = /Conflicting lock is held in (.+?) \(PID (\d+)\)/i;

/** The command as it is run: bin/recruit-sync.mjs, or the `recruit-sync` an install links to it. */
const OUR_COMMAND = /(^|\/)recruit-sync(\.mjs)?$/;

function isRecruitSync(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8")
      .split("\0")
      .some((arg) => OUR_COMMAND.test(arg));
  } catch {
    // Not Linux, or the process is gone or not ours to read: say only what DuckDB said.
    return false;
  }
}

/**
 * The process holding the DuckDB file, when `err` is DuckDB refusing to open
 * it for that reason; undefined for any other failure.
 */
export function lockHolder(err: unknown): FileLockHolder | undefined {
  const text = err instanceof Error ? err.message : String(err);
  if (!LOCK_CONFLICT.test(text)) return undefined;
  const named = HOLDER.exec(text);
  if (!named) return {};
  const pid = Number(named[2]);
  return { pid, program: named[1], ours: isRecruitSync(pid) };
}

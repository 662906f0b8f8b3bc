import { readFileSync, readlinkSync } from "node:fs";
import os from "node:os";

function readOr(read: () => string, fallback: string): string {
  try {
    return read().trim();
  } catch {
    return fallback;
  }
}

let host: string | undefined;

/**
 * What makes two processes see the same process ids: one host name, one
 * boot of its kernel, one pid namespace. Two containers may share a host
 * name, or the host's kernel; only when all three agree does a pid named by
 * another process mean the same process here. Without /proc (not Linux),
 * the host name alone.
 */
export function processHost(): string {
  host ??= [
    os.hostname(),
    readOr(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8"), "-"),
    readOr(() => readlinkSync("/proc/self/ns/pid").replace(/\D/g, ""), "-"),
  ].join("/");
  return host;
}

/**
 * Whether process `pid` of this host is gone: signal 0 checks without
 * sending anything. ESRCH means no such process; EPERM means it exists under
 * another user, so it is alive.
 */
export function processGone(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

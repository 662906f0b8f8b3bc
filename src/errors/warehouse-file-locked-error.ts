import { RecruitSyncError, type RecruitSyncErrorOptions } from "./recruit-sync-error.ts";

/** The process DuckDB names as holding a file's lock, as far as it says and this host can tell. */
export interface FileLockHolder {
  pid?: number | undefined;
  /** The program, as DuckDB names it (its executable: /usr/bin/duckdb, /usr/bin/node). */
  program?: string | undefined;
  /** True when the holder is a recruit-sync process (its command line says so). */
  ours?: boolean | undefined;
}

/** "another program (PID 123, /usr/bin/duckdb)", or less when DuckDB said less. */
export function describeHolder(holder: FileLockHolder): string {
  const what = holder.ours ? "another recruit-sync process" : "another program";
  const details = [
    ...(holder.pid === undefined ? [] : [`PID ${holder.pid}`]),
    ...(holder.program ? [holder.program] : []),
  ];
  return details.length ? `${what} (${details.join(", ")})` : what;
}

/**
 * A DuckDB warehouse file another process has open — an analyst's `duckdb`
 * session or notebook, read-only or not — so no export may write it: DuckDB
 * admits one writer process, and none beside a reader. Not our own export's
 * run lock (RunLockedError): that one ends when the run does. Retryable: the
 * file is free once that process closes it; a queued export waits for it up
 * to `exports.lockWaitMs`.
 */
export class WarehouseFileLockedError extends RecruitSyncError {
  readonly path: string;
  readonly holder: FileLockHolder;

  constructor(path: string, holder: FileLockHolder, options: RecruitSyncErrorOptions = {}) {
    super(
      "warehouse_file_locked",
      `the DuckDB file ${path} is open in ${describeHolder(holder)}: ${
        holder.ours ? "wait for it to end or stop it" : "close it there"
      }, then run the export again (DuckDB lets no other process write a file one has open, even read-only)`,
      { retryable: true, ...options },
    );
    this.path = path;
    this.holder = holder;
  }

  /** What a waiting export says in its progress: the file, who has it, and what frees it. */
  waitingWords(): string {
    const frees = this.holder.ours ? "once it ends" : "once it is closed there";
    return `the DuckDB file ${this.path} is open in ${describeHolder(this.holder)}: the export goes on ${frees}`;
  }
}

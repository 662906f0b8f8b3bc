import { rm } from "node:fs/promises";
import type { SyncRunRecord } from "../sinks/index.ts";
import type { PartsLoad, RunConstants } from "./log-file-sql.ts";
import type { LogPart } from "./person-log.ts";
import { loadRunLog, loadsAsTheRunGoes, type RunLogTarget, writeRunLog } from "./write-run-log.ts";

/**
 * Loads the parts of one run's log into the warehouse while the run goes
 * on, one load at a time in the order they were written, so that its end
 * loads only the last part with the run's row. DuckDB's work runs on its
 * own thread, so only its CPU competes with the import. Loading the whole
 * log at the end cost a 300k-row import 30–45% more time on a 2-core
 * machine; loaded as the run goes, 14–26% (docs/engineering/performance-log.md).
 * A thread of the log's own, tried too, cost more CPU to start than it saved.
 *
 * A load that cannot be done now (a DuckDB file another process holds, a
 * database down) is not waited for: the import must not stall on its log.
 * Its parts stay and go with the next load, or with the end's, which waits
 * for the file as the log always has (syncLog.lockWaitMs). A part is removed
 * once loaded: it holds emails or phones.
 */
export class PartLoader {
  readonly #target: RunLogTarget;
  readonly #runId: string;
  readonly #prepared: Promise<boolean>;
  readonly #mayRepeat: () => boolean;
  readonly #constants: Omit<RunConstants, "at">;
  readonly #pending: LogPart[] = [];
  readonly #done = new Set<string>();
  #chain: Promise<void> = Promise.resolve();
  /** Set once a load committed: the run's rows from before this run (a resume under its id) are gone. */
  #cleared = false;
  #loaded = 0;

  constructor(
    target: RunLogTarget,
    about: {
      runId: string;
      constants: Omit<RunConstants, "at">;
      prepared: Promise<boolean>;
      mayRepeat: () => boolean;
    },
  ) {
    this.#target = target;
    this.#constants = about.constants;
    this.#runId = about.runId;
    this.#prepared = about.prepared;
    this.#mayRepeat = about.mayRepeat;
  }

  /** A part the log closed while the run goes on. */
  add(part: LogPart): void {
    if (!loadsAsTheRunGoes(this.#target)) return;
    this.#pending.push(part);
    this.#chain = this.#chain.then(() => this.#loadPending());
  }

  async #loadPending(): Promise<void> {
    if (this.#pending.length === 0 || !(await this.#prepared)) return;
    const parts = [...this.#pending];
    try {
      const load = this.#load(parts, new Date());
      this.#loaded += await loadRunLog({ ...this.#target, lockWaitMs: 0 }, undefined, load);
    } catch {
      return;
    }
    this.#cleared = true;
    this.#pending.splice(0, parts.length);
    for (const p of parts) this.#done.add(p.file);
    await removeParts(parts);
  }

  #load(parts: readonly LogPart[], at: Date): PartsLoad {
    const constants = { ...this.#constants, at };
    return { runId: this.#runId, parts, constants, clear: !this.#cleared, mayRepeat: this.#mayRepeat() };
  }

  /**
   * The run's end: waits for the load under way, then writes the parts of
   * `all` (every part of the run's log) not loaded yet with the run's row,
   * stamped `at`. Returns the rows the run has in sync_log. The parts are
   * removed whatever happens.
   */
  async finish(run: SyncRunRecord, all: readonly LogPart[], at: Date): Promise<number> {
    await this.#chain;
    const parts = all.filter((p) => !this.#done.has(p.file));
    try {
      const { logged } = await writeRunLog(this.#target, run, this.#load(parts, at), this.#prepared);
      return this.#loaded + logged;
    } finally {
      await removeParts(parts);
    }
  }

  /** Waits for the load under way and removes the parts left: a run whose log is given up. */
  async abandon(all: readonly LogPart[]): Promise<void> {
    await this.#chain;
    await removeParts(all.filter((p) => !this.#done.has(p.file)));
  }
}

async function removeParts(parts: readonly LogPart[]): Promise<void> {
  await Promise.all(parts.map((p) => rm(p.file, { force: true })));
}

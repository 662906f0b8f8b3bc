import { rm } from "node:fs/promises";
import { Worker } from "node:worker_threads";
import { threadEntry } from "../imports/thread-entry.ts";
import type { SyncRunRecord } from "../sinks/index.ts";
import type { PartsLoad, RunConstants } from "./log-file-sql.ts";
import type { LogThreadAnswer, LogThreadCall } from "./log-thread.ts";
import type { LogPart } from "./person-log.ts";
import { loadsAsTheRunGoes, type RunLogTarget } from "./write-run-log.ts";

/** The log's thread's module (log-thread.ts). */
const LOG_THREAD = threadEntry(import.meta.url, "log-thread");

type Call = LogThreadCall extends infer C ? (C extends { id: number } ? Omit<C, "id"> : never) : never;

/**
 * Loads the parts of one run's log into the warehouse while the run goes
 * on, one load at a time in the order they were written, so that its end
 * loads only the last part with the run's row. Loading it all at the end
 * cost a 300k-row import ~40% of its time; beside the import it cost
 * 14–19% (docs/engineering/performance-log.md). The loads, and DuckDB's
 * library with them, run on a thread of their own: the import's thread
 * neither loads nor waits for them.
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
  readonly #mayRepeat: () => boolean;
  readonly #constants: Omit<RunConstants, "at">;
  readonly #pending: LogPart[] = [];
  readonly #done = new Set<string>();
  readonly #thread: Worker;
  readonly #calls = new Map<number, { resolve: (rows: number) => void; reject: (err: Error) => void }>();
  #nextCall = 0;
  /** Whether the warehouse's tables were made (or migrated) as the run started; the end tries again if not. */
  readonly prepared: Promise<boolean>;
  #chain: Promise<void>;
  /** Set once a load committed: the run's rows from before this run (a resume under its id) are gone. */
  #cleared = false;
  #loaded = 0;

  constructor(
    target: RunLogTarget,
    about: { runId: string; constants: Omit<RunConstants, "at">; mayRepeat: () => boolean },
  ) {
    // An AbortSignal cannot cross to the thread; the run's end gives up through its own wait.
    this.#target = { url: target.url, lockWaitMs: target.lockWaitMs };
    this.#runId = about.runId;
    this.#constants = about.constants;
    this.#mayRepeat = about.mayRepeat;
    this.#thread = new Worker(LOG_THREAD.entry, { eval: LOG_THREAD.eval });
    this.#thread.unref();
    this.#thread.on("message", (a: LogThreadAnswer) => this.#answered(a));
    this.#thread.on("error", (err) => this.#failAll(err));
    this.#thread.on("exit", (code) => this.#failAll(new Error(`the sync log's thread ended (${code})`)));
    this.prepared = this.#call({ op: "prepare", target: this.#target }).then(
      () => true,
      () => false,
    );
    this.#chain = this.prepared.then(() => undefined);
  }

  /** A part the log closed while the run goes on. */
  add(part: LogPart): void {
    if (!loadsAsTheRunGoes(this.#target)) return;
    this.#pending.push(part);
    this.#chain = this.#chain.then(() => this.#loadPending());
  }

  async #loadPending(): Promise<void> {
    if (this.#pending.length === 0 || !(await this.prepared)) return;
    const parts = [...this.#pending];
    try {
      const target = { ...this.#target, lockWaitMs: 0 };
      this.#loaded += await this.#call({ op: "load", target, load: this.#load(parts, new Date()) });
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
   * removed and the thread ended whatever happens.
   */
  async finish(run: SyncRunRecord, all: readonly LogPart[], at: Date): Promise<number> {
    await this.#chain;
    const parts = all.filter((p) => !this.#done.has(p.file));
    try {
      const load = this.#load(parts, at);
      const prepared = await this.prepared;
      return this.#loaded + (await this.#call({ op: "finish", target: this.#target, run, load, prepared }));
    } finally {
      await removeParts(parts);
      await this.#thread.terminate();
    }
  }

  /** Waits for the load under way, removes the parts left and ends the thread: a run whose log is given up. */
  async abandon(all: readonly LogPart[]): Promise<void> {
    await this.#chain;
    await removeParts(all.filter((p) => !this.#done.has(p.file)));
    await this.#thread.terminate();
  }

  /** Asks the thread; the thread keeps the process alive only while it has something to answer. */
  #call(call: Call): Promise<number> {
    const id = this.#nextCall++;
    return new Promise<number>((resolve, reject) => {
      this.#calls.set(id, { resolve, reject });
      this.#thread.ref();
      this.#thread.postMessage({ ...call, id } as LogThreadCall);
    });
  }

  #answered(a: LogThreadAnswer): void {
    const call = this.#calls.get(a.id);
    this.#calls.delete(a.id);
    if (this.#calls.size === 0) this.#thread.unref();
    if ("error" in a) call?.reject(new Error(a.error));
    else call?.resolve(a.rows);
  }

  #failAll(err: Error): void {
    for (const call of this.#calls.values()) call.reject(err);
    this.#calls.clear();
  }
}

async function removeParts(parts: readonly LogPart[]): Promise<void> {
  await Promise.all(parts.map((p) => rm(p.file, { force: true })));
}

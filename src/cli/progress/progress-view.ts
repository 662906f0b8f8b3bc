import { WaitUnion } from "../../governor/index.ts";
import { setTerminalGuard } from "../../logger/index.ts";
import { type AnyProgress, type ProgressModel, progressModel } from "../../queue/progress-model.ts";
import { plainLine } from "./plain-line.ts";
import { type OutStream, TerminalBars } from "./terminal-bars.ts";
import { terminalLines } from "./terminal-lines.ts";

export type { AnyProgress };

export interface ProgressView {
  /**
   * The latest state; `label` is the job's queue state, or the command for inline runs.
   * `startedAt` (epoch ms) is when a worker took a followed job; an inline run started with its first update.
   */
  update(label: string, progress: AnyProgress | undefined, startedAt?: number): void;
  /** Inline runs: the rate governor holds the next request for `ms`, until `until`. */
  budgetWait(ms: number, until: Date): void;
  /**
   * Wall-clock time spent (planned) waiting on the rate budget, as budgetWait
   * heard it: waits of requests in flight together count once.
   */
  readonly budgetWaitMs: number;
  /** Draws or prints the last state and lets go of the terminal. */
  close(): void;
  /** close, then `text` (the final report table) below the last state. */
  finish(text: string): void;
}

export interface ProgressViewOptions {
  /** Plain output: at most one line per this many ms, phase and state changes aside (default 2000). */
  plainEveryMs?: number;
  /** Terminal: redraw at most this often (default 150). */
  redrawMs?: number;
  now?: () => number;
  /** A dry run sends nothing: its counts say "would import", not "imported". */
  dryRun?: boolean;
}

/** Waits shorter than this are the governor polling for a free slot, not a spent budget. */
const SHOWN_WAIT_MS = 1000;

/** What makes a plain line worth printing at once: a new state, phase, resource status or wait. */
function milestone(m: ProgressModel): string {
  if (m.kind === "pending") return `${m.state}|${m.message ?? ""}|${m.waitingUntil ?? ""}`;
  const statuses = m.resources.map((r) => `${r.name}:${r.status}`).join(",");
  return `${m.state}|${m.phase ?? ""}|${statuses}|${m.waitingUntil ?? ""}`;
}

/**
 * Progress for people, from the one progress model (src/queue/progress-model.ts):
 * bars redrawn in place by cli-progress when `out` is a terminal, plain lines
 * at a modest rate (no ANSI) when it is a file or a pipe.
 */
export function createProgressView(out: OutStream, options: ProgressViewOptions = {}): ProgressView {
  const now = options.now ?? Date.now;
  let label = "";
  let latest: AnyProgress | undefined;
  const waited = new WaitUnion();
  let until: string | undefined;
  let started: number | undefined;
  const model = () =>
    progressModel({
      state: label,
      progress: latest,
      now: now(),
      dryRun: options.dryRun === true,
      budgetWaitMs: waited.ms,
      ...(until ? { waitingUntil: until } : {}),
      ...(started !== undefined ? { startedAt: started } : {}),
    });
  const take = (l: string, p: AnyProgress | undefined, startedAt: number | undefined) => {
    label = l;
    latest = p;
    started = startedAt ?? started ?? (p && p.kind !== "pending" ? now() : undefined);
  };
  const heardWait = (ms: number, at: Date): boolean => {
    waited.add(at.getTime() - ms, at.getTime());
    if (ms < SHOWN_WAIT_MS) return false;
    until = at.toISOString();
    return true;
  };

  if (out.isTTY) {
    // Redrawn on cli-progress's timer, not per update: runImport reports every chunk it hashes.
    const bars = new TerminalBars(out, options.redrawMs ?? 150, () => terminalLines(model()));
    let drawn = false;
    let closed = false;
    const touch = () => {
      if (drawn || closed || !label) return;
      drawn = true;
      bars.draw();
      setTerminalGuard((write) => bars.above(write));
    };
    return {
      update(l, p, startedAt) {
        take(l, p, startedAt);
        touch();
      },
      budgetWait(ms, at) {
        heardWait(ms, at);
        touch();
      },
      get budgetWaitMs() {
        return waited.ms;
      },
      finish(text) {
        this.close();
        out.write(`${text}\n`);
      },
      close() {
        if (closed) return;
        closed = true;
        if (!drawn) return;
        bars.stop();
        setTerminalGuard(undefined);
      },
    };
  }

  const every = options.plainEveryMs ?? 2000;
  let lastAt = Number.NEGATIVE_INFINITY;
  let lastLine = "";
  let lastMilestone = "";
  let unprinted = false;
  const print = (force: boolean) => {
    const m = model();
    const line = plainLine(m);
    const mark = milestone(m);
    if (line === lastLine) return;
    if (!force && mark === lastMilestone && now() - lastAt < every) {
      unprinted = true;
      return;
    }
    out.write(`${line}\n`);
    lastLine = line;
    lastMilestone = mark;
    lastAt = now();
    unprinted = false;
  };
  return {
    update(l, p, startedAt) {
      take(l, p, startedAt);
      print(false);
    },
    budgetWait(ms, at) {
      if (heardWait(ms, at) && label) print(false);
    },
    get budgetWaitMs() {
      return waited.ms;
    },
    close() {
      if (unprinted && label) print(true);
      unprinted = false;
    },
    finish(text) {
      this.close();
      out.write(`${text}\n`);
    },
  };
}

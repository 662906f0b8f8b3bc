import type { ExportProgress } from "../../exports/index.ts";
import type { ImportProgress } from "../../imports/index.ts";
import { setTerminalGuard } from "../../logger/index.ts";
import type { JobProgress } from "../../queue/job-progress.ts";
import { barLines } from "./bar-lines.ts";
import { LiveRegion, type OutStream } from "./live-region.ts";
import { progressLine } from "./progress-line.ts";

/** A pipeline's own progress (inline runs) or a queued job's, which adds the status fields. */
export type AnyProgress = JobProgress | ImportProgress | ExportProgress;

export interface ProgressView {
  /** The latest state; `label` is the job's queue state, or the command for inline runs. */
  update(label: string, progress: AnyProgress | undefined): void;
  /** Inline runs: the rate governor holds the next request for `ms`, until `until`. */
  budgetWait(ms: number, until: Date): void;
  /** Time spent (planned) waiting on the rate budget, as budgetWait heard it. */
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

function normalize(
  p: AnyProgress | undefined,
  waitedMs: number,
  until: string | undefined,
): JobProgress | undefined {
  if (!p) return undefined;
  const status = p as Partial<JobProgress & { budgetWaitMs: number; waitingUntil: string }>;
  const waitingUntil = status.waitingUntil ?? until;
  return {
    ...p,
    budgetWaitMs: status.budgetWaitMs || waitedMs,
    ...(waitingUntil ? { waitingUntil } : {}),
  } as JobProgress;
}

/** What makes a plain line worth printing at once: a new state, phase or resource status. */
function milestone(label: string, p: JobProgress | undefined): string {
  if (!p) return label;
  if (p.kind === "import") return `${label}|${p.phase}|${p.waitingUntil ?? ""}`;
  if (p.kind === "export") {
    return `${label}|${Object.entries(p.resources)
      .map(([r, s]) => `${r}:${s.status}`)
      .join(",")}|${p.waitingUntil ?? ""}`;
  }
  return `${label}|${p.message ?? ""}`;
}

/**
 * Progress for people: bars redrawn in place when `out` is a terminal,
 * plain lines at a modest rate (no ANSI) when it is a file or a pipe.
 */
export function createProgressView(out: OutStream, options: ProgressViewOptions = {}): ProgressView {
  const now = options.now ?? Date.now;
  let label = "";
  let latest: AnyProgress | undefined;
  let waitedMs = 0;
  let until: string | undefined;
  const current = () => normalize(latest, waitedMs, until && Date.parse(until) > now() ? until : undefined);

  if (out.isTTY) {
    const region = new LiveRegion(out);
    let tick = 0;
    let closed = false;
    const draw = () => region.draw(barLines(label, current(), tick++, now(), options.dryRun));
    // Redrawn on a timer, not per update: runImport reports every chunk it hashes.
    // Every tick redraws, so a spinner moves and a wait's "until" drops when it passes.
    const timer = setInterval(() => {
      if (label) draw();
    }, options.redrawMs ?? 150);
    timer.unref();
    setTerminalGuard((write) => region.above(write));
    let drawnOnce = false;
    const touch = () => {
      if (!drawnOnce && label && !closed) {
        drawnOnce = true;
        draw();
      }
    };
    return {
      update(l, p) {
        label = l;
        latest = p;
        touch();
      },
      budgetWait(ms, at) {
        waitedMs += ms;
        if (ms >= SHOWN_WAIT_MS) until = at.toISOString();
        touch();
      },
      get budgetWaitMs() {
        return waitedMs;
      },
      finish(text) {
        this.close();
        out.write(`${text}\n`);
      },
      close() {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        if (label) draw();
        region.release();
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
    const p = current();
    const line = progressLine(label, p, now(), options.dryRun);
    const mark = milestone(label, p);
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
    update(l, p) {
      label = l;
      latest = p;
      print(false);
    },
    budgetWait(ms, at) {
      waitedMs += ms;
      if (ms >= SHOWN_WAIT_MS) {
        until = at.toISOString();
        if (label) print(false);
      }
    },
    get budgetWaitMs() {
      return waitedMs;
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

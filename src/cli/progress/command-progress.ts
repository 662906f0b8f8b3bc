import type { JobProgress } from "../../queue/job-progress.ts";
import { type AnyProgress, createProgressView, type ProgressView } from "./progress-view.ts";
import type { OutStream } from "./terminal-bars.ts";

/**
 * Progress of a run in this process (`--inline`): hand `onProgress` to the
 * pipeline and `onBudgetWait` to the service client; `close` in a finally.
 */
export function inlineProgress(
  kind: "import" | "export",
  options: { dryRun?: boolean; out?: OutStream } = {},
) {
  const view: ProgressView = createProgressView(options.out ?? process.stdout, {
    dryRun: options.dryRun === true,
  });
  return {
    onProgress: (p: AnyProgress) => view.update(kind, p),
    onBudgetWait: (ms: number, until: Date) => view.budgetWait(ms, until),
    get budgetWaitMs() {
      return view.budgetWaitMs;
    },
    close: () => view.close(),
    /** Closes and prints the final report below the last state. */
    finish: (text: string) => view.finish(text),
  };
}

/** Progress of a queued job followed with `--wait`: hand `onUpdate` to followJob; `close` in a finally. */
export function followedProgress(options: { dryRun?: boolean; out?: OutStream } = {}) {
  const view = createProgressView(options.out ?? process.stdout, { dryRun: options.dryRun === true });
  let budgetWaitMs = 0;
  return {
    onUpdate: (state: string, p: JobProgress | undefined, job?: { processedOn?: number | undefined }) => {
      if (p) budgetWaitMs = p.budgetWaitMs;
      // The view's model puts the queue state in plain words, and projects the finish from when a worker took the job.
      view.update(state, p, job?.processedOn);
    },
    get budgetWaitMs() {
      return budgetWaitMs;
    },
    close: () => view.close(),
    finish: (text: string) => view.finish(text),
  };
}

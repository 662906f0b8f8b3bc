import { RecruitSyncError } from "../../errors/index.ts";
import { demoSucceeded, formatDemoSummary } from "./demo-summary.ts";
import { type DemoOptions, runDemo } from "./run-demo.ts";

export interface DemoCommandOptions extends Pick<DemoOptions, "port" | "opsPort" | "warehouse"> {
  keepRunning: boolean;
}

/**
 * What `recruit-sync demo` does: runs the demo, prints its summary, stays up
 * until Ctrl-C with --keep-running, then shuts everything down. Ends with
 * `job_failed` (exit 1) when a way did not end as it should.
 */
export async function runDemoCommand(options: DemoCommandOptions): Promise<void> {
  const abort = new AbortController();
  const onSignal = () => abort.abort(new RecruitSyncError("interrupted", "interrupted by a signal"));
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const demo = await runDemo({ ...options, signal: abort.signal });
    try {
      process.stdout.write(`${formatDemoSummary(demo, { keepRunning: options.keepRunning }).join("\n")}\n`);
      if (options.keepRunning && !abort.signal.aborted) {
        await new Promise<void>((resolve) =>
          abort.signal.addEventListener("abort", () => resolve(), { once: true }),
        );
        process.stdout.write("stopping: dashboard, worker, emulator…\n");
      }
    } finally {
      await demo.stop();
    }
    if (!demoSucceeded(demo)) {
      throw new RecruitSyncError(
        "job_failed",
        "the demo ended with a way that failed: see its summary above",
      );
    }
    if (options.keepRunning) process.stdout.write("stopped\n");
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

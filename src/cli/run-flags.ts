import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { RecruitSyncError } from "../errors/index.ts";

/**
 * The flags `import` and `export` share: which job, where it runs (in this
 * process, or queued for the workers and perhaps followed), where its report
 * goes and how it reaches the service.
 */
export interface RunFlags {
  job?: string;
  inline?: boolean;
  wait?: boolean;
  report?: string;
  baseUrl?: string;
  sharedBudget: boolean;
}

/** What --base-url puts over the configuration's service (RECRUIT_SYNC_BASE_URL). */
export function serviceOverrides(flags: Pick<RunFlags, "baseUrl">) {
  return flags.baseUrl ? { service: { baseUrl: flags.baseUrl } } : {};
}

/** Writes a run report as --report asks; mode 0600, as a report can name people. */
export async function writeReportFile(file: string, report: unknown): Promise<void> {
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`, { mode: 0o600 });
}

/**
 * Adds the options of RunFlags to a command: `kinds` names the job
 * definitions --job takes, `result` what a run prints at its end.
 */
export function addRunOptions(command: Command, names: { kinds: string; result: string }): Command {
  return command
    .option("--job <name>", `${names.kinds} job definition: jobs/<name>.yaml, or a path`)
    .option(
      "--inline",
      `run in this process and print the ${names.result} (default: enqueue for the workers)`,
    )
    .option("--wait", `follow the queued job: progress, then the ${names.result}; exit 1 if it fails`)
    .option("--report <file>", "also write the run report as JSON")
    .option("--base-url <url>", "the service, including /api/public/v1 (default: RECRUIT_SYNC_BASE_URL)")
    .option("--no-shared-budget", "do not share the rate budget through Redis");
}

/** A followed job that did not complete, as the CLI's one-line error (exit 1). */
export function jobFailed(kind: "import" | "export", failedReason: string | undefined): RecruitSyncError {
  return new RecruitSyncError("job_failed", `the ${kind} failed: ${failedReason ?? "no reason given"}`);
}

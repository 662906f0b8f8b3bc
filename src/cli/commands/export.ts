import os from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { EXPORT_RESOURCES } from "../../config/job-names.ts";
import { RecruitSyncError } from "../../errors/index.ts";
import type { RunReport } from "../../exports/index.ts";

// What an export needs loads when one runs, not when the CLI starts: the
// configuration (yaml, zod), the pipeline, the service client (ioredis) and
// the sink (DuckDB or pg, chosen by the warehouse URL).
const loadConfigModule = () => import("../../config/index.ts");
const loadExports = () => import("../../exports/index.ts");
const loadRuntime = () => import("../../runtime/index.ts");

import { limitHeapGrowth } from "../heap-growth.ts";
import { interruptSignal } from "../interrupt-signal.ts";
import { collect } from "../repeatable.ts";
import { addRunOptions, jobFailed, type RunFlags, serviceOverrides, writeReportFile } from "../run-flags.ts";
import { commandLogger } from "../verbosity.ts";

interface ExportFlags extends RunFlags {
  study: string[];
  propertyGroup: string[];
  incentiveIds?: string;
  warehouse?: string;
}

async function runInline(names: string[], flags: ExportFlags): Promise<void> {
  // Pages and rows are garbage at a steady pace: keep the heap near what is live.
  limitHeapGrowth("export");
  const { loadConfig } = await loadConfigModule();
  const { formatRunReport, RunReport } = await loadExports();
  const { runExportJob } = await import("../../runtime/run-export-job.ts");
  const config = loadConfig({ overrides: serviceOverrides(flags) });
  const logger = commandLogger("export");
  const { inlineProgress } = await import("../progress/index.ts");
  const progress = inlineProgress("export");
  const interrupt = interruptSignal();
  try {
    let report: RunReport;
    let failure: unknown;
    try {
      ({ report } = await runExportJob(
        { ...definitionFlags(names, flags), ...(flags.warehouse ? { warehouse: flags.warehouse } : {}) },
        {
          config,
          holder: `recruit-sync export --inline on ${os.hostname()} pid ${process.pid}`,
          shareBudget: flags.sharedBudget,
          signal: interrupt.signal,
          logger,
          onBudgetWait: progress.onBudgetWait,
        },
        { onProgress: progress.onProgress },
      ));
    } catch (err) {
      // A run that got under way ends with its report, whatever failed; one that never started has none.
      const parsed = RunReport.safeParse(err instanceof RecruitSyncError ? err.report : undefined);
      if (!parsed.success) throw err;
      report = parsed.data;
      failure = err;
    }
    progress.finish(formatRunReport(report));
    if (flags.report) await writeReportFile(flags.report, report);
    if (failure) throw failure;
  } finally {
    progress.close();
    interrupt.release();
  }
}

/** The lists the flags give, standing in for the job's. */
function definitionFlags(names: string[], flags: ExportFlags) {
  return {
    ...(flags.job ? { job: flags.job } : {}),
    ...(names.length ? { resources: names } : {}),
    ...(flags.study.length ? { studies: flags.study } : {}),
    ...(flags.propertyGroup.length ? { propertyGroups: flags.propertyGroup } : {}),
    ...(flags.incentiveIds ? { incentiveIdsFile: path.resolve(flags.incentiveIds) } : {}),
  };
}

/** Enqueues the export for the workers; with --wait follows it to the end. */
async function runQueued(names: string[], flags: ExportFlags): Promise<void> {
  const { loadConfig } = await loadConfigModule();
  const { formatRunReport, RunReport } = await loadExports();
  const { parseResources } = await loadRuntime();
  const config = loadConfig({ overrides: serviceOverrides(flags) });
  const { enqueueExport, followJob } = await import("../../queue/index.ts");
  const { withQueueSession } = await import("../queue-session.ts");
  await withQueueSession(config, async (queues) => {
    const { resources, ...lists } = definitionFlags(names, flags);
    const enqueued = await enqueueExport(config, queues, {
      ...lists,
      ...(resources ? { resources: parseResources(resources) } : {}),
      ...(flags.warehouse ? { warehouse: flags.warehouse } : {}),
      origin: "cli",
    });
    process.stdout.write(`export job ${enqueued.jobId} enqueued\n`);
    if (!flags.wait) return;
    const { followedProgress } = await import("../progress/index.ts");
    const progress = followedProgress();
    const end = await followJob(queues.exports, enqueued.jobId, progress.onUpdate, {
      epoch: enqueued.epoch,
    }).finally(progress.close);
    const report = RunReport.safeParse(end.report);
    if (report.success) {
      process.stdout.write(`${formatRunReport(report.data)}\n`);
      if (flags.report) await writeReportFile(flags.report, report.data);
    }
    if (end.state !== "completed") throw jobFailed("export", end.failedReason);
  });
}

/**
 * `recruit-sync export [RESOURCE...] --job NAME --inline`: runs an export in
 * this process and prints its report.
 */
export function registerExportCommand(program: Command): void {
  const command = program
    .command("export")
    .description("export resources into the warehouse (participants, email_messages, incentives, …)")
    .argument("[resources...]", `tables to load: ${EXPORT_RESOURCES.join(", ")} (default: all of the job's)`);
  addRunOptions(command, { kinds: "export", result: "report" })
    .option(
      "--study <id>",
      "a study whose participants to export (repeatable; replaces the job's list)",
      collect,
      [],
    )
    .option(
      "--property-group <id>",
      "a property group to export (repeatable; replaces the job's list)",
      collect,
      [],
    )
    .option("--incentive-ids <file>", "CSV of incentive ids to read (replaces the job's list)")
    .option(
      "--warehouse <url>",
      "duckdb:PATH, postgres://… or file:DIR (default: the job's sink, else RECRUIT_SYNC_WAREHOUSE)",
    )
    .addHelpText(
      "after",
      `
Examples:
  recruit-sync export --job nightly-export --inline       # in this process, the report at the end
  recruit-sync export --job nightly-export --wait         # enqueue for the workers, follow it
  recruit-sync export participants --study study_1 --warehouse duckdb:./data/study_1.duckdb --inline
  recruit-sync export email_messages incentives --warehouse postgres://postgres@127.0.0.1:5432/warehouse --inline`,
    )
    .action(async (names: string[], flags: ExportFlags) => {
      if (flags.inline) await runInline(names, flags);
      else await runQueued(names, flags);
    });
}

import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Command } from "commander";
import type { EncodingName } from "../../config/encoding-name.ts";
import type { RuntimeConfig } from "../../config/index.ts";
import { ENCODINGS, PRESET_NAMES } from "../../config/job-names.ts";
import { RecruitSyncError, UsageError } from "../../errors/index.ts";

// What an import needs loads when one runs, not when the CLI starts: the
// configuration (yaml, zod), the pipeline (csv-parse, libphonenumber) and the
// service client with Redis (ioredis). Never DuckDB, pg, fastify or BullMQ
// inline; the queued path loads BullMQ itself. The configuration comes from
// its own module, not config/index.ts, whose job files bring the export
// schema and cron-parser along.
const loadConfigModule = () => import("../../config/load-config.ts");
const loadImports = () => import("../../imports/index.ts");
// The progress view (cli-progress, the progress model's schema) loads when a run starts.
const loadProgress = () => import("../progress/index.ts");

import { limitHeapGrowth } from "../heap-growth.ts";
import { addRunOptions, jobFailed, type RunFlags, serviceOverrides, writeReportFile } from "../run-flags.ts";
import { commandLogger } from "../verbosity.ts";

interface ImportFlags extends RunFlags {
  preset?: string;
  study?: string;
  phoneCountry?: string;
  encoding?: string;
  dryRun?: boolean;
  rejects?: string;
  requests?: string;
  force?: boolean;
  full?: boolean;
}

function usage(message: string): RecruitSyncError {
  return new UsageError(message);
}

async function runInline(arg: string, flags: ImportFlags): Promise<void> {
  const { loadConfig } = await loadConfigModule();
  const { spoolInput } = await import("../../runtime/spool-input.ts");
  const config = loadConfig({ overrides: serviceOverrides(flags) });
  const input = await spoolInput(arg, config.paths.dataDir);
  try {
    await runInlineFile(input.file, flags, config);
  } finally {
    await input.cleanup();
  }
}

async function runInlineFile(file: string, flags: ImportFlags, config: RuntimeConfig): Promise<void> {
  const { formatSummary } = await loadImports();
  const { inlineProgress, importReportTable } = await loadProgress();
  const { runImportJob } = await import("../../runtime/run-import-job.ts");
  if (!existsSync(file)) throw usage(`no such file: ${file}`);
  const dryRun = flags.dryRun === true;
  const abort = new AbortController();
  const abandon = new AbortController();
  // The first Ctrl-C sends nothing more but waits for the answers of requests already sent (up to
  // service.timeoutMs), so the rerun does not send them again; the second gives up on them.
  const onSignal = () => {
    if (!abort.signal.aborted) {
      process.stderr.write(
        "stopping: nothing more is sent; waiting for the answers of requests already sent (Ctrl-C again to stop at once)\n",
      );
      abort.abort(new RecruitSyncError("interrupted", "interrupted by a signal", { retryable: true }));
    } else {
      abandon.abort(
        new RecruitSyncError("interrupted", "interrupted by a second signal", { retryable: true }),
      );
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const progress = inlineProgress("import", { dryRun });
  try {
    if (!dryRun) limitHeapGrowth("import");
    const { report, budgetWaitMs } = await runImportJob(
      {
        file,
        // Named at this shell (or spooled from its standard input): the person here can read it anyway.
        given: { by: "shell" },
        ...definitionFlags(flags),
        dryRun,
        force: flags.force === true,
        full: flags.full === true,
        // A new run, unless this file and definition have one that did not finish (killed, say):
        // that one's id is taken over, so its log and files are carried on, not left behind.
        runId: new Date().toISOString().replace(/[:.]/g, "-"),
        resumeUnfinished: true,
        ...(flags.rejects ? { rejectsFile: flags.rejects } : {}),
        ...(flags.requests ? { requestsFile: flags.requests } : {}),
      },
      {
        config,
        holder: `recruit-sync import --inline on ${os.hostname()} pid ${process.pid}`,
        shareBudget: flags.sharedBudget,
        signal: abort.signal,
        abandon: abandon.signal,
        logger: commandLogger("import"),
        onBudgetWait: progress.onBudgetWait,
      },
      { onProgress: progress.onProgress },
    );
    progress.finish(`${formatSummary(report)}\n${importReportTable(report, budgetWaitMs)}`);
    if (flags.report) await writeReportFile(flags.report, report);
  } finally {
    progress.close();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** How the flags name the definition: a job, or a preset with its study. */
function definitionFlags(flags: ImportFlags) {
  return {
    ...(flags.job ? { job: flags.job } : {}),
    // Checked against the presets where the definition is resolved or the job data parsed.
    ...(flags.preset ? { preset: flags.preset as (typeof PRESET_NAMES)[number] } : {}),
    ...(flags.study ? { study: flags.study } : {}),
    ...(flags.phoneCountry ? { phoneCountry: flags.phoneCountry } : {}),
    // Checked by the action before either way runs.
    ...(flags.encoding !== undefined ? { encoding: flags.encoding as EncodingName } : {}),
  };
}

/** Enqueues the import for the workers; with --wait follows it to the end. */
async function runQueued(file: string, flags: ImportFlags): Promise<void> {
  const { loadConfig } = await loadConfigModule();
  const config = loadConfig({ overrides: serviceOverrides(flags) });
  const { enqueueImport, followJob } = await import("../../queue/index.ts");
  const { withQueueSession } = await import("../queue-session.ts");
  await withQueueSession(config, async (queues) => {
    const enqueued = await enqueueImport(
      config,
      queues,
      {
        file,
        ...definitionFlags(flags),
        dryRun: flags.dryRun === true,
        force: flags.force === true,
        full: flags.full === true,
        origin: "cli",
      },
      // The file was named at this shell: signed so the workers read it wherever it is.
      { givenAtShell: true },
    );
    process.stdout.write(
      enqueued.duplicate
        ? `import job ${enqueued.jobId}: this file with this definition is already ${enqueued.state}; not enqueued again (--force imports it again)\n`
        : `import job ${enqueued.jobId} enqueued\n`,
    );
    if (!flags.wait) return;
    const { followedProgress } = await loadProgress();
    const progress = followedProgress({ dryRun: flags.dryRun === true });
    const end = await followJob(queues.imports, enqueued.jobId, progress.onUpdate, {
      epoch: enqueued.epoch,
    }).finally(progress.close);
    await finishFollowed(end, flags.report, progress.budgetWaitMs);
  });
}

/** Prints a followed job's report; a failed job becomes the CLI's one-line error (exit 1). */
async function finishFollowed(
  end: {
    state: string;
    report: unknown;
    failedReason: string | undefined;
  },
  reportFile: string | undefined,
  budgetWaitMs: number,
): Promise<void> {
  const { formatSummary, ImportReport, OptOutReport } = await loadImports();
  const { importReportTable } = await loadProgress();
  const { report } = end;
  const parsed = ImportReport.or(OptOutReport).safeParse(report);
  if (parsed.success) {
    process.stdout.write(`${formatSummary(parsed.data)}\n${importReportTable(parsed.data, budgetWaitMs)}\n`);
  }
  if (reportFile && report !== undefined) await writeReportFile(reportFile, report);
  if (end.state !== "completed") throw jobFailed("import", end.failedReason);
}

/**
 * `recruit-sync import FILE (--job NAME | --preset P --study ID) --inline`:
 * imports a CSV or CRM export (or applies an opt-out list) in this process and
 * prints the summary. Rows that cannot be imported go to a rejects CSV.
 */
export function registerImportCommand(program: Command): void {
  const command = program
    .command("import")
    .description("import a CSV / CRM export into a study, or apply an opt-out list")
    .argument("<file>", "the CSV file; - reads standard input (with --inline)");
  addRunOptions(command, { kinds: "import or opt-out", result: "summary" })
    .option("--preset <name>", `map a CRM export's standard columns by header: ${PRESET_NAMES.join(", ")}`)
    .option("--study <id>", "the study to import into (needed with --preset; replaces the job's)")
    .option(
      "--phone-country <cc>",
      "default country of phone numbers without +, e.g. US (replaces the job's phoneCountry)",
    )
    .option(
      "--encoding <name>",
      `the file's encoding, instead of the job's source.encoding (default auto: detected): ${ENCODINGS.join(", ")}`,
    )
    .option("--dry-run", "everything but the calls: write the requests it would send to a file")
    .option(
      "--rejects <file>",
      "where rejected rows go (default: <dataDir>/imports/<job>-<time>.rejects.csv)",
    )
    .option("--requests <file>", "dry run: where the requests go (default: next to the rejects)")
    .option("--force", "import again a file the ledger says was imported with this definition")
    .option("--full", "send everyone, not only the people changed since the last run")
    .addHelpText(
      "after",
      `
Examples:
  recruit-sync import samples/hubspot-contacts.csv --job hubspot-contacts --inline
  recruit-sync import contacts.csv --preset hubspot --study study_1 --phone-country US --inline
  recruit-sync import legacy.csv --job hubspot-contacts --encoding windows-1252 --inline
  recruit-sync import contacts.csv --job hubspot-contacts --wait      # enqueue for the workers, follow it
  recruit-sync import contacts.csv --job hubspot-contacts --dry-run --inline   # no calls: requests to a file
  cat opt-outs.csv | recruit-sync import - --job opt-out-list --inline`,
    )
    .action(async (file: string, flags: ImportFlags) => {
      if (flags.encoding !== undefined) {
        // Checked before anything runs or is queued, so both ways say the same.
        const { encodingOverride } = await import("../../runtime/import-definition.ts");
        flags.encoding = encodingOverride(flags.encoding);
      }
      if (flags.inline) await runInline(file, flags);
      else await runQueued(path.resolve(file), flags);
    });
}

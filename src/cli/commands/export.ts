import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import {
  EXPORT_RESOURCES,
  type ExportJobDefinition,
  type ExportResource,
  readExportJobFile,
  validateExportJobDefinition,
} from "../../config/export-job.ts";
import { loadConfig } from "../../config/index.ts";
import { ConfigError, RecruitSyncError } from "../../errors/index.ts";
import { formatRunReport, runExport } from "../../exports/index.ts";
import { createLogger } from "../../logger/index.ts";
import { createSink } from "../../sinks/index.ts";
import { createServiceClient } from "../service-client.ts";

interface ExportFlags {
  job?: string;
  inline?: boolean;
  study: string[];
  propertyGroup: string[];
  incentiveIds?: string;
  warehouse?: string;
  report?: string;
  baseUrl?: string;
  sharedBudget: boolean;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * The definition a command line asks for: the job file's, with --study,
 * --property-group and --incentive-ids standing in for its lists; without
 * --job, one built from the flags alone.
 */
async function definitionFrom(
  flags: ExportFlags,
  named: readonly ExportResource[],
  jobsDir: string,
): Promise<ExportJobDefinition> {
  let raw: Record<string, unknown>;
  let where: string;
  if (flags.job) {
    const read = await readExportJobFile(flags.job, jobsDir);
    if (!read.ok) {
      throw new ConfigError(
        `job ${flags.job} (${read.file}): ${read.problems[0]?.message}`,
        read.problems.map((p) => ({ path: p.path, message: p.message })),
      );
    }
    raw = read.raw;
    where = `job ${flags.job} (${read.file})`;
  } else {
    // One-off: the resources that need no list, plus those whose list was given.
    const resources: ExportResource[] = ["email_messages", "segments"];
    if (flags.study.length) resources.push("participants");
    if (flags.propertyGroup.length) resources.push("person_properties");
    if (flags.incentiveIds) resources.push("incentives", "custom_incentives");
    raw = { kind: "export", name: "adhoc", resources: EXPORT_RESOURCES.filter((r) => resources.includes(r)) };
    where = "the export flags";
  }
  if (named.length) raw.resources = [...named];
  if (flags.study.length) raw.studies = flags.study;
  if (flags.propertyGroup.length) raw.propertyGroups = flags.propertyGroup;
  if (flags.incentiveIds) {
    const inc = typeof raw.incentives === "object" && raw.incentives !== null ? raw.incentives : {};
    raw.incentives = { ...inc, ids: [], idsFile: path.resolve(flags.incentiveIds) };
  }
  const result = validateExportJobDefinition(raw);
  if (!result.ok) {
    const first = result.problems[0];
    const hint =
      first?.path === "studies"
        ? " (add --study ID)"
        : first?.path === "propertyGroups"
          ? " (add --property-group ID)"
          : "";
    throw new ConfigError(
      `${where}: ${first?.path ? `${first.path}: ` : ""}${first?.message}${hint}`,
      result.problems,
    );
  }
  return result.definition;
}

function parseResources(names: readonly string[]): ExportResource[] {
  const unknown = names.filter((n) => !(EXPORT_RESOURCES as readonly string[]).includes(n));
  if (unknown.length) {
    throw new ConfigError(
      `unknown resource ${unknown.join(", ")}: expected one of ${EXPORT_RESOURCES.join(", ")}`,
    );
  }
  return names as ExportResource[];
}

async function runInline(names: string[], flags: ExportFlags): Promise<void> {
  const resources = parseResources(names);
  const config = loadConfig({
    overrides: { ...(flags.baseUrl ? { service: { baseUrl: flags.baseUrl } } : {}) },
  });
  const definition = await definitionFrom(flags, resources, path.resolve(config.paths.jobsDir));
  const warehouse = flags.warehouse ?? definition.sink ?? config.warehouse.url;
  const logger = createLogger({ level: config.log.level, name: "export" });
  const service = await createServiceClient(config, { shareBudget: flags.sharedBudget, logger });
  const abort = new AbortController();
  const onSignal = () => abort.abort(new Error("interrupted by a signal"));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const sink = await createSink(warehouse);
    try {
      const report = await runExport({
        definition,
        client: service.client,
        sink,
        signal: abort.signal,
        logger,
      });
      process.stdout.write(`${formatRunReport(report)}\n`);
      if (flags.report) {
        await writeFile(flags.report, `${JSON.stringify(report, null, 2)}\n`, { mode: 0o600 });
      }
      if (report.status !== "succeeded") {
        const failed = Object.entries(report.resources).filter(([, r]) => r.status !== "succeeded");
        throw new RecruitSyncError(
          "export_failed",
          `export ${report.runId} ${report.status}: ${failed.map(([n, r]) => `${n}: ${r.error ?? r.status}`).join("; ")}`,
        );
      }
    } finally {
      await sink.close();
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await service.close();
  }
}

/**
 * `recruit-sync export [RESOURCE...] --job NAME --inline`: runs an export in
 * this process and prints its report.
 */
export function registerExportCommand(program: Command): void {
  program
    .command("export")
    .description("export resources into the warehouse (participants, email_messages, incentives, …)")
    .argument("[resources...]", `tables to load: ${EXPORT_RESOURCES.join(", ")} (default: all of the job's)`)
    .option("--job <name>", "export job definition: jobs/<name>.yaml, or a path")
    .option("--inline", "run in this process and print the report")
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
    .option("--report <file>", "also write the run report as JSON")
    .option("--base-url <url>", "the service, including /api/public/v1 (default: RECRUIT_SYNC_BASE_URL)")
    .option("--no-shared-budget", "do not share the rate budget through Redis")
    .action(async (names: string[], flags: ExportFlags) => {
      if (!flags.inline) {
        throw new RecruitSyncError(
          "usage",
          "queued exports come with the queue runtime; run this one in-process with --inline",
        );
      }
      await runInline(names, flags);
    });
}

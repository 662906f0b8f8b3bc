import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import type { Redis } from "ioredis";
import { parse as parseYaml } from "yaml";
import {
  type FileJobDefinition,
  PRESET_NAMES,
  type PresetName,
  validateFileJobDefinition,
} from "../../config/import-job.ts";
import { loadConfig } from "../../config/index.ts";
import { ConfigError, RecruitSyncError } from "../../errors/index.ts";
import {
  formatSummary,
  type ImportReport,
  type OptOutReport,
  runImport,
  runOptOut,
} from "../../imports/index.ts";
import { connectRedis, createServiceClient, type ServiceClient } from "../service-client.ts";

interface ImportFlags {
  job?: string;
  preset?: string;
  study?: string;
  phoneCountry?: string;
  inline?: boolean;
  dryRun?: boolean;
  report?: string;
  rejects?: string;
  requests?: string;
  force?: boolean;
  baseUrl?: string;
  sharedBudget: boolean;
}

function usage(message: string): RecruitSyncError {
  return new RecruitSyncError("usage", message);
}

/** jobs/<name>.yaml, or a path to a YAML file. */
async function readJob(name: string, jobsDir: string): Promise<{ file: string; raw: unknown }> {
  const file = /[/\\]|\.ya?ml$/.test(name) ? path.resolve(name) : path.join(jobsDir, `${name}.yaml`);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw new ConfigError(`no job definition ${name}: ${file} does not exist`);
  }
  try {
    return { file, raw: parseYaml(text) };
  } catch (err) {
    throw new ConfigError(
      `${file}: not valid YAML (${err instanceof Error ? err.message.split("\n")[0] : err})`,
      [],
      {
        cause: err,
      },
    );
  }
}

async function definitionFrom(
  flags: ImportFlags,
  jobsDir: string,
): Promise<{ definition: FileJobDefinition; name: string }> {
  if (flags.job && flags.preset) throw usage("give --job NAME or --preset NAME --study ID, not both");
  let raw: unknown;
  let where: string;
  let name: string;
  if (flags.job) {
    const job = await readJob(flags.job, jobsDir);
    raw = job.raw;
    where = `job ${flags.job} (${job.file})`;
    name = path.basename(job.file).replace(/\.ya?ml$/, "");
  } else if (flags.preset) {
    if (!(PRESET_NAMES as readonly string[]).includes(flags.preset)) {
      throw usage(`unknown preset ${flags.preset}: expected one of ${PRESET_NAMES.join(", ")}`);
    }
    if (!flags.study) throw usage(`--preset ${flags.preset} needs --study ID, the study to import into`);
    raw = {
      kind: "import",
      preset: flags.preset as PresetName,
      target: { studyId: flags.study },
      ...(flags.phoneCountry ? { phoneCountry: flags.phoneCountry } : {}),
    };
    where = `--preset ${flags.preset}`;
    name = `${flags.preset}-import`;
  } else {
    throw usage("say how to read the file: --job NAME, or --preset hubspot|salesforce|mailchimp --study ID");
  }
  if (flags.study && flags.job && typeof raw === "object" && raw !== null) {
    const r = raw as { target?: Record<string, unknown> };
    r.target = { ...(r.target ?? {}), studyId: flags.study };
  }
  const result = validateFileJobDefinition(raw);
  if (!result.ok) {
    const first = result.problems[0];
    throw new ConfigError(
      `${where}: ${first?.path ? `${first.path}: ` : ""}${first?.message}`,
      result.problems,
    );
  }
  return { definition: result.definition, name: result.definition.name ?? name };
}

async function runInline(file: string, flags: ImportFlags): Promise<void> {
  if (!existsSync(file)) throw usage(`no such file: ${file}`);
  const config = loadConfig({ overrides: flags.baseUrl ? { service: { baseUrl: flags.baseUrl } } : {} });
  const { definition, name } = await definitionFrom(flags, path.resolve(config.paths.jobsDir));
  const dryRun = flags.dryRun === true;
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const outDir = path.resolve(config.paths.dataDir, "imports");
  await mkdir(outDir, { recursive: true, mode: 0o700 });
  const rejectsFile = path.resolve(flags.rejects ?? path.join(outDir, `${name}-${stamp}.rejects.csv`));
  const requestsFile = path.resolve(flags.requests ?? path.join(outDir, `${name}-${stamp}.requests.jsonl`));

  let service: ServiceClient | undefined;
  let redis: Redis | undefined;
  const abort = new AbortController();
  const onSignal = () => abort.abort(new RecruitSyncError("interrupted", "interrupted by a signal"));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    if (!dryRun) {
      service = await createServiceClient(config, { shareBudget: flags.sharedBudget });
    }
    let report: ImportReport | OptOutReport;
    if (definition.kind === "import") {
      if (!dryRun) {
        redis = await connectRedis(config, "the import ledger lives there");
      }
      report = await runImport({
        file,
        definition,
        job: name,
        ...(service ? { client: service.client } : {}),
        dryRun,
        requestsFile,
        rejectsFile,
        ...(redis ? { ledger: { redis, prefix: config.redis.prefix } } : {}),
        force: flags.force === true,
        signal: abort.signal,
      });
    } else {
      report = await runOptOut({
        file,
        definition,
        job: name,
        ...(service ? { client: service.client } : {}),
        dryRun,
        requestsFile,
        rejectsFile,
        signal: abort.signal,
      });
    }
    process.stdout.write(`${formatSummary(report)}\n`);
    if (flags.report) await writeFile(flags.report, `${JSON.stringify(report, null, 2)}\n`, { mode: 0o600 });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    redis?.disconnect();
    await service?.close();
  }
}

/**
 * `recruit-sync import FILE (--job NAME | --preset P --study ID) --inline`:
 * imports a CSV or CRM export (or applies an opt-out list) in this process and
 * prints the summary. Rows that cannot be imported go to a rejects CSV.
 */
export function registerImportCommand(program: Command): void {
  program
    .command("import")
    .description("import a CSV / CRM export into a study, or apply an opt-out list")
    .argument("<file>", "the CSV file")
    .option("--job <name>", "job definition: jobs/<name>.yaml, or a path (kind import or opt-out)")
    .option("--preset <name>", `map a CRM export's standard columns by header: ${PRESET_NAMES.join(", ")}`)
    .option("--study <id>", "the study to import into (needed with --preset; replaces the job's)")
    .option("--phone-country <cc>", "with --preset: default country of phone numbers without +, e.g. US")
    .option("--inline", "run in this process and print the summary")
    .option("--dry-run", "everything but the calls: write the requests it would send to a file")
    .option("--report <file>", "also write the run report as JSON")
    .option(
      "--rejects <file>",
      "where rejected rows go (default: <dataDir>/imports/<job>-<time>.rejects.csv)",
    )
    .option("--requests <file>", "dry run: where the requests go (default: next to the rejects)")
    .option("--force", "import again a file the ledger says was imported with this definition")
    .option("--base-url <url>", "the service, including /api/public/v1 (default: RECRUIT_SYNC_BASE_URL)")
    .option("--no-shared-budget", "do not share the rate budget through Redis")
    .action(async (file: string, flags: ImportFlags) => {
      if (!flags.inline) {
        throw usage("queued imports come with the queue runtime; run this one in-process with --inline");
      }
      await runInline(path.resolve(file), flags);
    });
}

import type { Command } from "commander";
import type { PersonProperty } from "../../api/index.ts";
import type { RuntimeConfig } from "../../config/index.ts";
import { UsageError } from "../../errors/index.ts";
import { collect } from "../repeatable.ts";

const loadConfigModule = () => import("../../config/index.ts");
const loadSuggest = () => import("../../suggest/index.ts");

interface SuggestFlags {
  name?: string;
  study?: string;
  phoneCountry?: string;
  offline?: boolean;
  propertyGroup: string[];
  dir?: string;
  rows: string;
}

/** The property groups named by --property-group, else by the export definitions in the jobs folder. */
async function propertyGroupsOf(flags: SuggestFlags, jobsDir: string): Promise<string[]> {
  if (flags.propertyGroup.length > 0) return flags.propertyGroup;
  const { readJobFiles } = await loadConfigModule();
  const groups = new Set<string>();
  for (const f of await readJobFiles(jobsDir)) {
    if (f.ok && f.definition.kind === "export") for (const g of f.definition.propertyGroups) groups.add(g);
  }
  return [...groups];
}

/**
 * The workspace's properties of the configured groups, through the one
 * service client (shared rate budget included). Without a token, with
 * --offline, or when the service or Redis cannot be reached, the suggestion
 * goes on without them and says so on stderr.
 */
async function workspaceProperties(
  config: RuntimeConfig,
  flags: SuggestFlags,
  jobsDir: string,
): Promise<PersonProperty[]> {
  if (flags.offline) return [];
  const skip = (why: string) => {
    process.stderr.write(
      `recruit-sync: workspace properties not read (${why}): columns are mapped by headers and values only\n`,
    );
    return [];
  };
  if (!config.service.token) return skip("no RECRUIT_SYNC_API_TOKEN; --offline says so quietly");
  const groups = await propertyGroupsOf(flags, jobsDir);
  if (groups.length === 0)
    return skip("no property group: give --property-group, or name propertyGroups in an export job");
  const { createServiceClient } = await import("../../runtime/index.ts");
  const { fetchWorkspaceProperties } = await loadSuggest();
  try {
    const service = await createServiceClient(config, { priority: "interactive" });
    try {
      return await fetchWorkspaceProperties(service.client, groups);
    } finally {
      await service.close();
    }
  } catch (err) {
    return skip(err instanceof Error ? err.message.replace(/\s*\n\s*/g, " ") : String(err));
  }
}

/** `recruit-sync jobs suggest FILE`: the suggested import job definition as YAML on stdout. */
export function registerJobsSuggest(jobs: Command): void {
  jobs
    .command("suggest")
    .description(
      "suggests an import job definition for FILE: every mapped column under columns:, as YAML on stdout",
    )
    .argument("<file>", "a CSV or CRM export")
    .option("--name <name>", "the job's name (default: from the file name)")
    .option("--study <studyId>", "the study to import into (default: a placeholder to replace)")
    .option("--phone-country <CC>", "default country of phone numbers without + (job key phoneCountry)")
    .option("--offline", "do not read the workspace's person properties from the service")
    .option(
      "--property-group <id>",
      "a property group whose properties columns may map to, repeatable (default: the export jobs' propertyGroups)",
      collect,
      [],
    )
    .option("--dir <dir>", "the jobs folder (default: paths.jobsDir of the config)")
    .option("--rows <n>", "rows read to sniff values", "200")
    .addHelpText(
      "after",
      `
Examples:
  recruit-sync jobs suggest export.csv --name crm-contacts --study study_1 > jobs/crm-contacts.yaml
  recruit-sync jobs suggest signups.csv --offline          # headers and values only`,
    )
    .action(async (file: string, flags: SuggestFlags) => {
      const path = await import("node:path");
      const { loadConfig } = await loadConfigModule();
      const { jobNameOf, suggestMappingForFile, suggestionYaml } = await loadSuggest();
      const name = flags.name ?? jobNameOf(file);
      if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) {
        throw new UsageError(`--name ${name}: a job's name is lower-case letters, digits and dashes`);
      }
      const rows = Number(flags.rows);
      if (!Number.isInteger(rows) || rows < 1)
        throw new UsageError(`--rows ${flags.rows}: a whole number from 1`);
      const config = loadConfig();
      const jobsDir = path.resolve(flags.dir ?? config.paths.jobsDir);
      const properties = await workspaceProperties(config, flags, jobsDir);
      const suggestion = await suggestMappingForFile(file, {
        name,
        rows,
        properties,
        ...(flags.study ? { studyId: flags.study } : {}),
        ...(flags.phoneCountry ? { phoneCountry: flags.phoneCountry } : {}),
      });
      if (!suggestion.definition) {
        const { ImportFileError } = await import("../../imports/index.ts");
        const problems = suggestion.problems.map((p) => `${p.path}: ${p.message}`).join("; ");
        throw new ImportFileError(
          "file_missing_identifier",
          `no job can be suggested for ${file}: ${problems}`,
        );
      }
      process.stdout.write(suggestionYaml(suggestion, suggestion.definition));
    });
}

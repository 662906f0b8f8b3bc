import path from "node:path";
import {
  EXPORT_RESOURCES,
  type ExportJobDefinition,
  type ExportResource,
  readExportJobFile,
  validateExportJobDefinition,
} from "../config/export-job.ts";
import { ConfigError } from "../errors/index.ts";

/** How a caller names an export: a job, and lists that stand in for the job's. */
export interface ExportDefinitionRequest {
  job?: string | undefined;
  /** The definition itself (a schedule's), run instead of the job file's; `job` then only names it. */
  definition?: Record<string, unknown> | undefined;
  /** A subset of resources; the job's (or the flags') when empty. */
  resources?: readonly string[] | undefined;
  studies?: readonly string[] | undefined;
  propertyGroups?: readonly string[] | undefined;
  /** A CSV of incentive ids. */
  incentiveIdsFile?: string | undefined;
}

/** Names checked against the known resources; a ConfigError lists the known ones. */
export function parseResources(names: readonly string[]): ExportResource[] {
  const unknown = names.filter((n) => !(EXPORT_RESOURCES as readonly string[]).includes(n));
  if (unknown.length) {
    throw new ConfigError(
      `unknown resource ${unknown.join(", ")}: expected one of ${EXPORT_RESOURCES.join(", ")}`,
    );
  }
  return names as ExportResource[];
}

/**
 * The definition a command line or a queue job asks for: the job file's, with
 * studies, property groups and incentive ids standing in for its lists;
 * without a job, one built from the lists alone.
 */
export async function resolveExportDefinition(
  request: ExportDefinitionRequest,
  jobsDir: string,
): Promise<ExportJobDefinition> {
  const named = parseResources(request.resources ?? []);
  const studies = request.studies ?? [];
  const groups = request.propertyGroups ?? [];
  let raw: Record<string, unknown>;
  let where: string;
  if (request.definition) {
    raw = structuredClone(request.definition);
    where = `the definition scheduled as ${request.job ?? "(unnamed)"}`;
  } else if (request.job) {
    const read = await readExportJobFile(request.job, jobsDir);
    if (!read.ok) {
      const missing = read.problems[0]?.message === "no such job file";
      throw new ConfigError(
        `job ${request.job} (${read.file}): ${read.problems[0]?.message}${missing ? " (run 'recruit-sync jobs list' to see the jobs)" : ""}`,
        read.problems.map((p) => ({ path: p.path, message: p.message })),
      );
    }
    raw = read.raw;
    where = `job ${request.job} (${read.file})`;
  } else {
    // One-off: the resources that need no list, plus those whose list was given.
    const resources: ExportResource[] = ["email_messages", "segments"];
    if (studies.length) resources.push("participants");
    if (groups.length) resources.push("person_properties");
    if (request.incentiveIdsFile) resources.push("incentives", "custom_incentives");
    raw = { kind: "export", name: "adhoc", resources: EXPORT_RESOURCES.filter((r) => resources.includes(r)) };
    where = "the export flags";
  }
  if (named.length) raw.resources = [...named];
  if (studies.length) raw.studies = [...studies];
  if (groups.length) raw.propertyGroups = [...groups];
  if (request.incentiveIdsFile) {
    const inc = typeof raw.incentives === "object" && raw.incentives !== null ? raw.incentives : {};
    raw.incentives = { ...inc, ids: [], idsFile: path.resolve(request.incentiveIdsFile) };
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

import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import {
  EncodingName,
  type FileJobDefinition,
  PRESET_NAMES,
  type PresetName,
  validateFileJobDefinition,
} from "../config/import-job.ts";
import { describeYamlError } from "../config/yaml-error.ts";
import { ConfigError, UsageError } from "../errors/index.ts";

/** How a caller names the definition of an import: a job, or a preset and a study. */
export interface ImportDefinitionRequest {
  job?: string | undefined;
  preset?: string | undefined;
  study?: string | undefined;
  phoneCountry?: string | undefined;
  /** Replaces the definition's `source.encoding`: the file's encoding, or `auto` to detect it. */
  encoding?: string | undefined;
  /**
   * A definition given whole, as the console's page or a script builds it:
   * checked exactly as a jobs/ file is, never written anywhere.
   */
  definition?: Record<string, unknown> | undefined;
}

export interface ResolvedImportDefinition {
  definition: FileJobDefinition;
  /** The job's name, for reports, ledgers and queue job ids. */
  name: string;
  /** The YAML file it came from, when it came from one. */
  file: string | undefined;
}

/** A job named that jobs/ does not hold: a ConfigError of its own, so callers tell it apart by class. */
export class JobNotFoundError extends ConfigError {}

/** jobs/<name>.yaml, or a path to a YAML file. */
async function readJob(name: string, jobsDir: string): Promise<{ file: string; raw: unknown }> {
  const file = /[/\\]|\.ya?ml$/.test(name) ? path.resolve(name) : path.join(jobsDir, `${name}.yaml`);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw new JobNotFoundError(
      `no job definition ${name}: ${file} does not exist (run 'recruit-sync jobs list' to see the jobs)`,
    );
  }
  try {
    return { file, raw: parseYaml(text) };
  } catch (err) {
    throw new ConfigError(`${file}: ${describeYamlError(err, text)}`, [], { cause: err });
  }
}

/** `--encoding NAME` checked: an unknown name is a usage error that lists the known ones. */
export function encodingOverride(name: string): EncodingName {
  const parsed = EncodingName.safeParse(name);
  if (!parsed.success) throw new UsageError(`--encoding: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/**
 * The import (or opt-out) definition a command line, a queue job or a watched
 * folder asks for: a job file's, with `study` standing in for its target and
 * `encoding` for its source's, or one built from a CRM preset.
 */
export async function resolveImportDefinition(
  request: ImportDefinitionRequest,
  jobsDir: string,
): Promise<ResolvedImportDefinition> {
  const ways = [request.job, request.preset, request.definition].filter((w) => w !== undefined).length;
  const encoding = request.encoding === undefined ? undefined : encodingOverride(request.encoding);
  if (ways > 1) {
    throw new UsageError("give one of --job NAME, --preset NAME --study ID, or a definition, not several");
  }
  let raw: unknown;
  let where: string;
  let name: string;
  let file: string | undefined;
  if (request.job) {
    const job = await readJob(request.job, jobsDir);
    raw = job.raw;
    file = job.file;
    where = `job ${request.job} (${job.file})`;
    name = path.basename(job.file).replace(/\.ya?ml$/, "");
  } else if (request.preset) {
    if (!(PRESET_NAMES as readonly string[]).includes(request.preset)) {
      throw new UsageError(`unknown preset ${request.preset}: expected one of ${PRESET_NAMES.join(", ")}`);
    }
    if (!request.study) {
      throw new UsageError(`--preset ${request.preset} needs --study ID, the study to import into`);
    }
    raw = {
      kind: "import",
      preset: request.preset as PresetName,
      target: { studyId: request.study },
      ...(request.phoneCountry ? { phoneCountry: request.phoneCountry } : {}),
    };
    where = `--preset ${request.preset}`;
    name = `${request.preset}-import`;
  } else if (request.definition) {
    raw = structuredClone(request.definition);
    where = "the definition given";
    name = typeof request.definition.name === "string" ? request.definition.name : "upload";
  } else {
    throw new UsageError(
      `say how to read the file: --job NAME, or --preset ${PRESET_NAMES.join("|")} --study ID`,
    );
  }
  if (request.study && !request.preset && typeof raw === "object" && raw !== null) {
    const r = raw as { target?: Record<string, unknown> };
    r.target = { ...(r.target ?? {}), studyId: request.study };
  }
  if (request.phoneCountry && !request.preset && typeof raw === "object" && raw !== null) {
    const r = raw as { kind?: unknown; phoneCountry?: unknown };
    if (r.kind !== "import") {
      throw new UsageError(
        `--phone-country applies to imports, and ${where} is kind ${String(r.kind)}: leave the flag out`,
      );
    }
    // Replaces the job's default country, as --study replaces its study; checked with the rest below.
    r.phoneCountry = request.phoneCountry;
  }
  if (encoding && typeof raw === "object" && raw !== null) {
    const r = raw as { source?: Record<string, unknown> };
    r.source = { ...(r.source ?? {}), encoding };
  }
  const result = validateFileJobDefinition(raw);
  if (!result.ok) {
    const first = result.problems[0];
    throw new ConfigError(
      `${where}: ${first?.path ? `${first.path}: ` : ""}${first?.message}`,
      result.problems,
    );
  }
  return { definition: result.definition, name: result.definition.name ?? name, file };
}
